#include "extender/node/plugin/ledger.h"

#include <algorithm>

namespace topofit::node {

uint64_t Ledger::Record(std::string pod_uid, std::string container, DeviceList devices) {
  std::sort(devices.begin(), devices.end());
  if (!pod_uid.empty()) {
    std::erase_if(entries_, [&](const LedgerEntry& e) { return e.pod_uid == pod_uid && e.container == container; });
  }
  // Devices kubelet just allocated are free in its books: whoever the ledger thought held them
  // (a stale unidentified entry, a pod whose release it has not yet seen) holds them no longer.
  for (auto& e : entries_) {
    if (e.pod_uid == pod_uid && !pod_uid.empty()) continue;  // Same pod: init-container reuse.
    std::erase_if(e.devices, [&](const std::string& d) { return std::binary_search(devices.begin(), devices.end(), d); });
  }
  std::erase_if(entries_, [](const LedgerEntry& e) { return e.devices.empty(); });
  entries_.push_back({std::move(pod_uid), std::move(container), std::move(devices), ++seq_, false});
  return seq_;
}

void Ledger::ReplaceWithTruth(std::vector<LedgerEntry> truth, uint64_t sent_at) {
  for (auto& e : truth) {
    std::sort(e.devices.begin(), e.devices.end());
    e.seq = 0;
    e.confirmed = true;
  }
  for (auto& e : entries_) {
    if (e.seq <= sent_at) continue;
    std::erase_if(truth, [&](const LedgerEntry& t) {
      return !e.pod_uid.empty() && t.pod_uid == e.pod_uid && t.container == e.container;
    });
    truth.push_back(std::move(e));
  }
  entries_ = std::move(truth);
}

void Ledger::Retain(const std::set<std::string>& live) {
  std::erase_if(entries_, [&](const LedgerEntry& e) { return !e.pod_uid.empty() && !live.count(e.pod_uid); });
  std::erase_if(ended_, [&](const std::string& uid) { return !live.count(uid); });
}

void Ledger::MarkEnded(const std::string& pod_uid) {
  std::erase_if(entries_, [&](const LedgerEntry& e) { return e.pod_uid == pod_uid; });
  ended_.insert(pod_uid);
}

bool Ledger::Ended(std::string_view pod_uid) const { return ended_.find(pod_uid) != ended_.end(); }

bool Ledger::Allocated(std::string_view pod_uid, std::string_view container) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const LedgerEntry& e) { return e.pod_uid == pod_uid && e.container == container; });
}

bool Ledger::Conflicts(const DeviceList& devices, std::string_view pod_uid) const {
  for (const auto& e : entries_) {
    if (!e.pod_uid.empty() && e.pod_uid == pod_uid) continue;
    for (const auto& d : devices) {
      if (std::binary_search(e.devices.begin(), e.devices.end(), d)) return true;
    }
  }
  return false;
}

std::set<std::string> Ledger::HeldDevices() const {
  std::set<std::string> held;
  for (const auto& e : entries_) held.insert(e.devices.begin(), e.devices.end());
  return held;
}

}  // namespace topofit::node
