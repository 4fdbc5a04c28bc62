#include "extender/apiclient/model_sink.h"

namespace topofit::apiclient {

void ModelSink::Send(const std::vector<cluster::Requeue>& requeues) const {
  for (const cluster::Requeue& r : requeues) requeue_(r.pod, r.node);
}

void ModelSink::Freed(const std::vector<std::string>& nodes) {
  if (!requeue_) return;
  for (const std::string& node : nodes) Send(rule_.Freed(node));
}

void ModelSink::ApplyPod(const k8s::PodObject& pod) {
  const k8s::PodObject seen = dra_.Pod(pod);
  if (!requeue_) return model_.ApplyPod(seen);
  Send(rule_.ApplyPod(seen));
}

void ModelSink::DeletePod(std::string_view uid) {
  dra_.ForgetPod(uid);
  if (!requeue_) return model_.DeletePod(uid);
  Send(rule_.DeletePod(uid));
}

}  // namespace topofit::apiclient
