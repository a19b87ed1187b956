package daemon

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/svmcluster/svm/dsm/engine"
	"github.com/svmcluster/svm/dsm/launch"
)

// Bounds on a submission beyond its settings.
const (
	// MaxRequest bounds a submission as svmd reads it (the program's
	// arguments and environment take most of it): before svmd has read
	// and checked one, that is all a connection can make it hold.
	MaxRequest = 1 << 20
	// maxKillAfter bounds the time a job's ranks get between SIGTERM and
	// SIGKILL: svmd's own shutdown waits that long for them.
	maxKillAfter = time.Minute
)

// Check reports the first thing wrong with a submission: its settings
// (engine.Settings.Check, with at most maxRanks ranks), its hosts, the
// paths and strings its ranks are started with, and the time they get to
// stop. svmf checks a job with it before submitting, and every svmd the job
// reaches checks it again. Whether the program and the directory will do
// is for the ranks' own exec and chdir to say, as the job's user.
func (s JobSpec) Check(maxRanks int) error {
	if err := s.Settings.Check(maxRanks); err != nil {
		return err
	}
	if err := launch.CheckBinding(s.Bind); err != nil {
		return fmt.Errorf("-bind: %w", err)
	}
	if len(s.Hosts) == 0 || len(s.Hosts) > engine.MaxRanks {
		return fmt.Errorf("--hosts: %d nodes; want 1 to %d", len(s.Hosts), engine.MaxRanks)
	}
	for i, h := range s.Hosts {
		if err := checkNodeName(h.Node); err != nil {
			return fmt.Errorf("--hosts: %w", err)
		}
		if h.Slots < 1 || h.Slots > maxSlots {
			return fmt.Errorf("--hosts: node %q: %d slots; want 1 to %d", h.Node, h.Slots, maxSlots)
		}
		if slices.ContainsFunc(s.Hosts[:i], func(o HostSlots) bool { return o.Node == h.Node }) {
			return fmt.Errorf("--hosts: node %q is listed twice", h.Node)
		}
	}
	if !filepath.IsAbs(s.Program) {
		return fmt.Errorf("program %q: want an absolute path (svmf resolves it)", s.Program)
	}
	if !filepath.IsAbs(s.Dir) {
		return fmt.Errorf("working directory %q: want an absolute path", s.Dir)
	}
	for _, strs := range []struct {
		what string
		list []string
	}{{"program", []string{s.Program}}, {"working directory", []string{s.Dir}}, {"argument", s.Args}, {"environment variable", s.Env}} {
		for _, str := range strs.list {
			if strings.IndexByte(str, 0) >= 0 {
				return fmt.Errorf("%s %q holds a NUL byte, which no program can be given", strs.what, str)
			}
		}
	}
	if s.KillAfter < 0 || s.KillAfter > int64(maxKillAfter) {
		return fmt.Errorf("-kill-after %v: want 0 to %v", time.Duration(s.KillAfter), maxKillAfter)
	}
	return nil
}

// decodeSubmission reads and checks the job a submission frame carries.
func decodeSubmission(body []byte, maxRanks int) (JobSpec, error) {
	var spec JobSpec
	if err := decode(body, &spec); err != nil {
		return JobSpec{}, fmt.Errorf("job spec: %w", err)
	}
	return spec, spec.Check(maxRanks)
}
