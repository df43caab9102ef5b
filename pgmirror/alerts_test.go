package pgmirror_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The alert rules shipped with the module load, and fire as their tests
// say (promtool test rules; the test command installs promtool with
// Prometheus's Debian package). Each alert has a runbook naming the command
// to run, and reads only metrics the mirror serves (or Prometheus's up).
func TestTheAlertRulesPassPromtool(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	require.NoError(t, err, "these tests need promtool (Debian: apt-get install prometheus; scripts/install-deps.sh installs it)")
	for _, args := range [][]string{{"check", "rules", "invoicing-mirror.rules.yml"}, {"test", "rules", "invoicing-mirror.rules.test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = "alerts"
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %v:\n%s", args, out)
	}

	rules, err := os.ReadFile("alerts/invoicing-mirror.rules.yml")
	require.NoError(t, err)
	alerts := regexp.MustCompile(`(?m)^      - alert: (\w+)\n((?:        .*\n)+)`).FindAllStringSubmatch(string(rules), -1)
	require.Len(t, alerts, 8)
	for _, a := range alerts {
		_, runbook, ok := strings.Cut(a[2], "runbook: >-\n")
		require.True(t, ok, "%s has a runbook", a[1])
		assert.Contains(t, runbook, "`invoicing-mirror ", "%s's runbook names a command", a[1])
		for _, metric := range regexp.MustCompile(`invoicing_\w+`).FindAllString(strings.SplitN(a[2], "\n", 2)[0], -1) {
			assert.Regexp(t, `^invoicing_(mirror_(dependency_up|businesses|event_lag_seconds_bucket|reconciliations_overdue)|`+
				`pginbox_(oldest_pending_age_seconds|deliveries_total))$`, metric, "%s reads a metric the mirror serves", a[1])
		}
	}
}
