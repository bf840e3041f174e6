//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// cl is the cluster every test of the run shares: deployed once by TestMain, deleted after
// the last test (unless VROS_E2E_KEEP=1). nil in VROS_E2E_BASE_URL mode, where only
// TestDeployedChart runs (against that edge) and the cluster scenarios skip.
var cl *deployment

// tb is what the deployment helpers need of a test: *testing.T, or mainTB in TestMain.
type tb interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// mainTB reports for TestMain, which has no *testing.T: Fatalf unwinds to TestMain (see
// setupFailed), which tears the cluster down and exits non-zero.
type mainTB struct{}

func (mainTB) Helper() {}

func (mainTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (mainTB) Fatalf(format string, args ...any) { panic(setupFailed(fmt.Sprintf(format, args...))) }

type setupFailed string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) (code int) {
	flag.Parse()
	if os.Getenv("VROS_E2E_BASE_URL") != "" || listing() {
		return m.Run()
	}
	var d *deployment
	defer func() {
		r := recover()
		if msg, ok := r.(setupFailed); ok {
			fmt.Fprintln(os.Stderr, "e2e setup failed:", string(msg))
			code = 1
		}
		if d != nil {
			d.tearDown(mainTB{}, code != 0 || r != nil)
		}
		if r != nil {
			if _, ok := r.(setupFailed); !ok {
				panic(r)
			}
		}
	}()
	d = newDeployment(mainTB{})
	d.create(mainTB{})
	d.install(mainTB{})
	cl = d
	return m.Run()
}

// listing reports whether go test only lists the tests (-test.list): no cluster for that.
func listing() bool {
	f := flag.Lookup("test.list")
	return f != nil && strings.TrimSpace(f.Value.String()) != ""
}

// needCluster skips a scenario that needs the cluster the suite deploys, and on failure
// logs the namespace's pods and latest events while they still show what went wrong (the
// full diagnostics come once, when the run ends).
func needCluster(t *testing.T) *deployment {
	t.Helper()
	if cl == nil {
		t.Skip("needs the kind cluster the suite deploys; VROS_E2E_BASE_URL runs only TestDeployedChart")
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, args := range [][]string{
			{"-n", namespace, "get", "pods", "-o", "wide"},
			{"-n", namespace, "get", "events", "--sort-by=.lastTimestamp"},
		} {
			out, err := cl.kubectlOutput(args...)
			if lines := strings.Split(out, "\n"); len(lines) > 40 {
				out = strings.Join(lines[len(lines)-40:], "\n")
			}
			t.Logf("kubectl %s (err=%v):\n%s", strings.Join(args, " "), err, out)
		}
	})
	return cl
}
