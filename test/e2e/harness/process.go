package harness

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

func execCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	// The child dies with the test process, even when the test binary is killed by a timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// Process is a subprocess of the harness (kube-apiserver, kube-scheduler, topofit) whose stdout and
// stderr go to LogPath (appended, so a restarted process keeps one log).
type Process struct {
	Name    string
	Path    string
	Args    []string
	Env     []string // added to the test's environment
	LogPath string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts the process; it fails if it is already running.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s already running", p.Name)
	}
	log, err := os.OpenFile(p.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "\n===== %s: %s %q\n", time.Now().Format(time.RFC3339Nano), p.Path, p.Args)
	cmd := execCommand(p.Path, p.Args...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.Env = append(os.Environ(), p.Env...)
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() {
		err := cmd.Wait()
		log.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// PID is the process id of the current run, 0 when it is not running.
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// CPUSeconds is the user + system CPU time the current run has used so far (from /proc), 0 when it
// is not running.
func (p *Process) CPUSeconds() float64 {
	pid := p.PID()
	if pid == 0 {
		return 0
	}
	return procCPUSeconds(pid)
}

// Running reports whether the process has been started and not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	done := p.done
	p.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Exited is closed when the current run of the process ends (nil if never started).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.done
}

// Stop sends SIGTERM, waits up to grace, then SIGKILL. Safe to call when not running.
func (p *Process) Stop(grace time.Duration) error {
	return p.signal(syscall.SIGTERM, grace)
}

// Kill sends SIGKILL at once (a crash, as far as the process's peers can tell).
func (p *Process) Kill() error {
	return p.signal(syscall.SIGKILL, 0)
}

func (p *Process) signal(sig syscall.Signal, grace time.Duration) error {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
	if grace > 0 {
		select {
		case <-done:
		case <-time.After(grace):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	<-done
	p.mu.Lock()
	err := p.err
	p.cmd, p.done = nil, nil
	p.mu.Unlock()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed or exited non-zero after our signal: expected
	}
	return err
}
