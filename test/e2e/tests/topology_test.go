package tests

import (
	"regexp"
	"sort"
	"strconv"
	"testing"

	"topofit.dev/e2e/harness"
)

// nvlinks returns, for a profile, the number of NVLinks between each pair of GPUs.
func nvlinks(t testing.TB, profile string) [][]int {
	t.Helper()
	m, ok := harness.NVLinkMatrix(profile)
	if !ok {
		t.Fatalf("no matrix for profile %q", profile)
	}
	return m
}

var gpuIDRe = regexp.MustCompile(`\d+`)

// parseGPUIDs reads topofit.io/gpu-ids. It accepts "0,1,2,3" and similar lists of indices
// ("GPU0,GPU1", "[0, 1]"): every run of digits is one GPU index.
func parseGPUIDs(s string) []int {
	var ids []int
	for _, m := range gpuIDRe.FindAllString(s, -1) {
		n, _ := strconv.Atoi(m)
		ids = append(ids, n)
	}
	sort.Ints(ids)
	return ids
}

// nvlinkConnected: every pair of the set has at least one NVLink.
func nvlinkConnected(m [][]int, ids []int) bool {
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			if m[ids[i]][ids[j]] == 0 {
				return false
			}
		}
	}
	return true
}

// nvlinkSum is the total of NVLinks between pairs of the set: the quantity a topology-aware
// choice maximises.
func nvlinkSum(m [][]int, ids []int) int {
	s := 0
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			s += m[ids[i]][ids[j]]
		}
	}
	return s
}

// bestNVLinkSum is the largest nvlinkSum of any k-subset of the n GPUs (brute force, n <= 8).
func bestNVLinkSum(m [][]int, k int) int {
	n, best := len(m), -1
	for mask := 0; mask < 1<<n; mask++ {
		var ids []int
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				ids = append(ids, i)
			}
		}
		if len(ids) == k {
			if s := nvlinkSum(m, ids); s > best {
				best = s
			}
		}
	}
	return best
}

func TestTopologyHelpers(t *testing.T) {
	m := nvlinks(t, "dgx1-v100")
	if got := bestNVLinkSum(m, 4); got != nvlinkSum(m, []int{0, 1, 2, 3}) {
		t.Errorf("dgx1-v100 best quad sum %d, quad 0-3 sums %d", got, nvlinkSum(m, []int{0, 1, 2, 3}))
	}
	if !nvlinkConnected(m, []int{4, 5, 6, 7}) || nvlinkConnected(m, []int{0, 5}) {
		t.Error("dgx1-v100 connectivity wrong")
	}
	if bestNVLinkSum(m, 2) != 2 {
		t.Error("dgx1-v100 best pair should be an NV2 pair")
	}
	if got := parseGPUIDs("3,1, 2"); len(got) != 3 || got[0] != 1 || got[2] != 3 {
		t.Errorf("parseGPUIDs: %v", got)
	}
	if nvlinkConnected(nvlinks(t, "pcie-8-dual-socket"), []int{0, 1}) {
		t.Error("pcie has no NVLink")
	}
}
