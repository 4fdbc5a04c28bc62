#pragma once
// Small helpers every gRPC part of `topofit node` shares: unix-socket addresses, channels, deadlines.

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace topofit::node {

// "unix:<path>": gRPC's address of a unix socket (absolute path).
inline std::string UnixAddress(const std::string& path) { return "unix:" + path; }

inline std::string JoinPath(const std::string& dir, const std::string& name) {
  if (name.empty() || name[0] == '/') return name;
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// A channel to a unix socket; kubelet dials plugins with authority "localhost", and so does topofit.
// Reconnects back off from 100 ms to at most 1 s (gRPC's defaults: 1 s to 120 s): the peer is on
// the same node, and a restarted kubelet or plugin must be reached again at once (an Allocate waiting
// for the backend, the PodResources Gets that name the pod being admitted). Each channel has its own
// connections (a local subchannel pool): by default gRPC shares them among channels to one address,
// so a channel made for a plugin that just restarted on the same path could be handed the connection
// to its previous instance, and its first call fail with "Broken pipe".
inline std::shared_ptr<grpc::Channel> UnixChannel(const std::string& path) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, "localhost");
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  return grpc::CreateCustomChannel(UnixAddress(path), grpc::InsecureChannelCredentials(), args);
}

inline std::chrono::system_clock::time_point After(std::chrono::milliseconds d) {
  return std::chrono::system_clock::now() + d;
}

// The socket's inode, 0 when it does not exist: a changed inode means it was re-created.
inline ino_t SocketInode(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace topofit::node
