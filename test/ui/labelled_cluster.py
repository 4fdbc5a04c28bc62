"""A cluster in network domains, as `topofit serve --snapshot` loads it (`kubectl get nodes,pods -A -o json`
prints the same List): 8-GPU nodes named gpu-node-0, gpu-node-1, ... labelled as NVIDIA topograph labels
them (network.topology.nvidia.com/spine and /block; kubelet's kubernetes.io/hostname), `nodes_per_block`
nodes a block and `blocks_per_spine` blocks a spine, the last `unlabelled` nodes without topograph labels;
and pods holding GPUs as a cluster in use looks (as extender/k8s/testing/busy_cluster.h fills one: on 7 of
every 8 nodes, each GPU held with probability 1/2, seeded). The web view's test and its bench use it.
"""
import json
import random

SPINE = "network.topology.nvidia.com/spine"
BLOCK = "network.topology.nvidia.com/block"
PROFILES = ("hgx-h100-8", "dgx1-v100", "hgx-a100-8")


def node_name(i):
    return f"gpu-node-{i}"


def domain_of(i, nodes, nodes_per_block, blocks_per_spine, unlabelled):
    """(spine, block) of node i; (None, None) for the unlabelled ones."""
    if i >= nodes - unlabelled:
        return None, None
    block = i // nodes_per_block
    return f"spine-{block // blocks_per_spine}", f"block-{block}"


def node_object(i, spine, block):
    name = node_name(i)
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.count": "8"}
    if spine is not None:
        labels[SPINE], labels[BLOCK] = spine, block
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": f"node-{i}", "labels": labels,
                         "annotations": {"topofit.io/gpu-topology": PROFILES[i % len(PROFILES)]}},
            "status": {"allocatable": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"},
                       "capacity": {"cpu": "96", "memory": "1Ti", "nvidia.com/gpu": "8"}}}


def busy_pods(nodes, seed=42):
    """{node index: the GPU indices its one pod holds}."""
    rng = random.Random(seed)
    held = {}
    for i in range(nodes):
        if i % 8 == 0:
            continue
        gpus = [g for g in range(8) if rng.random() < 0.5]
        if gpus:
            held[i] = gpus
    return held


def pod_object(i, gpus):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"job-{i}", "namespace": "busy", "uid": f"busy-{i}",
                         "annotations": {"topofit.io/gpu-ids": ",".join(map(str, gpus))}},
            "spec": {"nodeName": node_name(i), "containers": [
                {"name": "main", "resources": {"limits": {"nvidia.com/gpu": str(len(gpus))}}}]},
            "status": {"phase": "Running"}}


def write(path, nodes, nodes_per_block=32, blocks_per_spine=8, unlabelled=0, seed=42):
    """Writes the List; returns {node name: (spine, block)}."""
    domains = {node_name(i): domain_of(i, nodes, nodes_per_block, blocks_per_spine, unlabelled) for i in range(nodes)}
    items = [node_object(i, *domains[node_name(i)]) for i in range(nodes)]
    items += [pod_object(i, gpus) for i, gpus in busy_pods(nodes, seed).items()]
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}, f)
    return domains
