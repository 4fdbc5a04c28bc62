// Package harness starts a real control plane for topofit's end-to-end tests.
package harness
