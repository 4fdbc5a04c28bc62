// Package tests holds topofit's end-to-end scenarios against real kube-apiserver and kube-scheduler
// (see ../harness). smoke_test.go proves the harness with a fake extender in the test process;
// topofit_test.go runs the real topofit binary named by $TOPOFIT_BINARY (skipped when it is unset).
package tests
