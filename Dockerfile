# topofit container image: `topofit serve` (the extender sidecar) and `topofit node` (the node
# DaemonSet) from one binary. Build from the repository root:
#   docker build --build-arg TOPOFIT_GIT_REVISION=$(git describe --always --dirty --tags) -t topofit:dev .
# The revision is a build argument because .git is not part of the build context (.dockerignore);
# `topofit --version` reports it. BUILD_BASE and RUNTIME_BASE name the two base images;
# scripts/build-image.sh builds with podman from a Debian base it makes with debootstrap (no registry).
ARG BUILD_BASE=debian:bookworm
ARG RUNTIME_BASE=debian:bookworm-slim

# ---- build: the same Debian packages as a developer machine (scripts/install-deps.sh) ----
FROM ${BUILD_BASE} AS build
ARG TOPOFIT_GIT_REVISION=unknown
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTOPOFIT_E2E=OFF \
          -DTOPOFIT_GIT_REVISION="${TOPOFIT_GIT_REVISION}" \
 && cmake --build /build --target topofit \
 && strip /build/extender/cli/topofit \
 && /build/extender/cli/topofit --version

# ---- runtime: only the shared libraries `ldd topofit` needs ----
# test/deploy/check-dockerfile-libs.sh maps every library ldd lists to its Debian package and fails
# when a package is missing from the list between the markers (keep one package per line).
FROM ${RUNTIME_BASE}
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    # runtime-packages-begin
    ca-certificates \
    libboost-graph1.74.0 \
    libcpp-httplib0.11 \
    libfmt9 \
    libgrpc++1.51 \
    libprotobuf32 \
    libsimdjson14 \
    libssl3 \
    libyaml-cpp0.7 \
    # runtime-packages-end
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/extender/cli/topofit /usr/local/bin/topofit
# A numeric non-root user, so Kubernetes' runAsNonRoot can verify it (65532 is distroless' nonroot).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/topofit"]
CMD ["serve"]
