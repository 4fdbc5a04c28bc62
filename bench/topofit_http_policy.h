#pragma once
// The topofit policy over the wire: the same decisions as MakeTopofitPolicy, but every filter,
// prioritize and bind is a real HTTP request to a running `topofit serve` (--via-http URL), encoded as
// kube-scheduler encodes them (docs/extender-protocol.md: PascalCase ExtenderArgs with
// NodeNames, node-cache mode), so the decision time includes the served path: HTTP, JSON, the
// server's model and locks.
//
// The server must know the bench's nodes (start it on a snapshot of them, e.g. one written by
// `topofit bench replay --write-snapshot`) and must be able to bind. The granted GPU set is read back
// from the bind reply's pod annotation when the server reports it, else from
// GET <URL>/api/v1/pods/<namespace>/<name> ("gpus"). Departures have no extender verb (the server
// learns them from its watch), so this policy supports the paper protocol, which has none.

#include <memory>

#include "bench/policy.h"

namespace topofit::bench {

std::unique_ptr<Policy> MakeTopofitHttpPolicy(const PolicyOptions& options);

}  // namespace topofit::bench
