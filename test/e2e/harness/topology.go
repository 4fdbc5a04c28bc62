package harness

import (
	"strconv"
	"strings"
)

// nvlinkMatrices are the GPU-to-GPU blocks of the built-in topofit profiles the scenarios use, as
// `nvidia-smi topo -m` prints them (NV<n>: n NVLinks; anything else: PCIe/SMP only).
var nvlinkMatrices = map[string]string{
	"dgx1-v100": `
X   NV1 NV1 NV2 NV2 SYS SYS SYS
NV1 X   NV2 NV1 SYS NV2 SYS SYS
NV1 NV2 X   NV2 SYS SYS NV1 SYS
NV2 NV1 NV2 X   SYS SYS SYS NV1
NV2 SYS SYS SYS X   NV1 NV1 NV2
SYS NV2 SYS SYS NV1 X   NV2 NV1
SYS SYS NV1 SYS NV1 NV2 X   NV2
SYS SYS SYS NV1 NV2 NV1 NV2 X`,
	"hgx-a100-8": allToAll(8, "NV12"),
	"pcie-8-dual-socket": `
X    NODE NODE NODE SYS  SYS  SYS  SYS
NODE X    NODE NODE SYS  SYS  SYS  SYS
NODE NODE X    NODE SYS  SYS  SYS  SYS
NODE NODE NODE X    SYS  SYS  SYS  SYS
SYS  SYS  SYS  SYS  X    NODE NODE NODE
SYS  SYS  SYS  SYS  NODE X    NODE NODE
SYS  SYS  SYS  SYS  NODE NODE X    NODE
SYS  SYS  SYS  SYS  NODE NODE NODE X`,
}

func allToAll(n int, link string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString("\n")
		for j := 0; j < n; j++ {
			if i == j {
				b.WriteString("X ")
			} else {
				b.WriteString(link + " ")
			}
		}
	}
	return b.String()
}

// NVLinkMatrix is the number of NVLinks between each pair of GPUs of a built-in profile
// ("dgx1-v100", "hgx-a100-8", "pcie-8-dual-socket").
func NVLinkMatrix(profile string) ([][]int, bool) {
	text, ok := nvlinkMatrices[profile]
	if !ok {
		return nil, false
	}
	var m [][]int
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		var row []int
		for _, f := range strings.Fields(line) {
			n := 0
			if strings.HasPrefix(f, "NV") {
				n, _ = strconv.Atoi(f[2:])
			}
			row = append(row, n)
		}
		m = append(m, row)
	}
	return m, true
}
