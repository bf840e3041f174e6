package openapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/getkin/kin-openapi/openapi3"
)

// chromium is Debian's Chromium (make chromium installs it).
const chromium = "/usr/bin/chromium"

// listed is one operation as the reference page lists it.
type listed struct {
	Method  string `json:"method"`
	Path    string `json:"path"`
	ID      string `json:"id"`
	Webhook bool   `json:"webhook"`
}

func (o listed) String() string {
	s := o.Method + " " + o.Path
	if o.Webhook {
		s = "webhook " + s
	}
	if o.ID != "" {
		s += " (" + o.ID + ")"
	}
	return s
}

// pageState is what the page shows: its title, the operations it lists, the servers it
// offers "Try it out" and the errors it reports.
type pageState struct {
	Title   string   `json:"title"`
	Ops     []listed `json:"ops"`
	Servers []string `json:"servers"`
	NoOps   bool     `json:"noOps"`
	Errors  string   `json:"errors"`
}

const readPage = `(() => {
	const title = document.querySelector('.information-container .info .title');
	const ops = [...document.querySelectorAll('.opblock')].map(el => ({
		method: (el.querySelector('.opblock-summary-method') || {}).textContent || '',
		path: (el.querySelector('.opblock-summary [data-path]') || {getAttribute: () => ''}).getAttribute('data-path') || '',
		id: (el.querySelector('.opblock-summary-operation-id') || {}).textContent || '',
		webhook: !!el.closest('.webhooks'),
	}));
	const servers = [...document.querySelectorAll('.servers select option')].map(o => o.value);
	const errors = document.querySelector('.errors-wrapper');
	return {
		title: title ? title.textContent : '',
		ops: ops,
		servers: servers,
		noOps: document.body.textContent.includes('No operations defined in spec!'),
		errors: errors ? errors.textContent : '',
	};
})()`

// expected are a document's operations: every method of every path, and of every webhook.
func expected(t *testing.T, name string) (*openapi3.T, []listed) {
	t.Helper()
	src, err := YAML(name)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(src)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var ops []listed
	add := func(items map[string]*openapi3.PathItem, webhook bool) {
		for p, item := range items {
			for method, op := range item.Operations() {
				ops = append(ops, listed{Method: strings.ToUpper(method), Path: p, ID: op.OperationID, Webhook: webhook})
			}
		}
	}
	if doc.Paths != nil {
		add(doc.Paths.Map(), false)
	}
	add(doc.Webhooks, true)
	return doc, ops
}

// TestReferencePageListsEveryOperation is the "must show": the reference page,
// served by these routes, loads in headless Chromium and lists every operation of every
// document (each once or more: an operation of several tags is listed under each), offers
// "Try it out" against the edge that served it, reports no error, and makes no request
// beyond loopback. Without Chromium it is skipped, unless VROS_REQUIRE_CHROMIUM=1; under
// -short (make test-unit) too.
func TestReferencePageListsEveryOperation(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a browser (make test-unit is -short; make test runs it)")
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("VROS_REQUIRE_CHROMIUM") == "1" {
			t.Fatalf("%s: %v (make chromium installs it)", chromium, err)
		}
		t.Skipf("%s: %v (make chromium installs it; VROS_REQUIRE_CHROMIUM=1 makes this a failure)", chromium, err)
	}
	app := testApp(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	t.Cleanup(func() { _ = app.Shutdown() })
	base := "http://" + ln.Addr().String()

	profile, err := os.MkdirTemp("", "vros-reference-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(profile) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Belt and braces on a closed network: no name resolves; requests are checked below.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1600),
	)
	defer cancelAlloc()

	var mu sync.Mutex
	var requests, problems []string
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("exception: %s (%s:%d)", msg, d.URL, d.LineNumber))
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
				}
				problems = append(problems, "console.error: "+strings.Join(args, " "))
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				problems = append(problems, fmt.Sprintf("%s error: %s (%s)", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		}
	}))
	defer cancelBrowser()

	for _, name := range Documents {
		t.Run(name, func(t *testing.T) {
			doc, want := expected(t, name)
			page := base + "/reference/?urls.primaryName=" + url.QueryEscape(name)
			if err := chromedp.Do(bctx, chromedp.Navigate(page)); err != nil {
				t.Fatalf("open %s: %v", page, err)
			}
			// Rendered: the document's title is shown and the operations listed are those
			// of the document (or the page says it has none), the same at two reads in a row.
			var st pageState
			prev := ""
			deadline := time.Now().Add(60 * time.Second)
			for {
				st, err = chromedp.Run(bctx, chromedp.Evaluate[pageState](readPage))
				if err != nil {
					t.Fatal(err)
				}
				ready := strings.HasPrefix(strings.TrimSpace(st.Title), doc.Info.Title) &&
					(len(unique(st.Ops)) == len(want) && len(want) > 0 || len(want) == 0 && st.NoOps) || st.Errors != ""
				seen := fmt.Sprint(st)
				if ready && seen == prev {
					break
				}
				prev = seen
				if time.Now().After(deadline) {
					t.Fatalf("%s: not rendered in 60 s: title %q, %d operations listed of %d, errors %q", page, st.Title, len(unique(st.Ops)), len(want), st.Errors)
				}
				time.Sleep(250 * time.Millisecond)
			}
			if st.Errors != "" {
				t.Errorf("%s: the page reports errors: %s", name, st.Errors)
			}
			got := unique(st.Ops)
			for _, w := range want {
				i := slices.IndexFunc(got, func(g listed) bool {
					return g.Method == w.Method && g.Path == w.Path && g.Webhook == w.Webhook
				})
				if i < 0 {
					t.Errorf("%s: %v is not listed", name, w)
					continue
				}
				if w.ID != "" && got[i].ID != w.ID {
					t.Errorf("%s: %v is listed as %v", name, w, got[i])
				}
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d operations listed, the document has %d: %v", name, len(got), len(want), got)
			}
			t.Logf("%s: %d operations listed (%d blocks)", name, len(got), len(st.Ops))
			if len(want) > 0 && (len(st.Servers) == 0 || st.Servers[0] != base) {
				t.Errorf("%s: Try it out offers servers %v, want %s first (the edge that served the page)", name, st.Servers, base)
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Contains(requests, base+"/openapi/"+name+".json") {
				t.Errorf("%s: the page did not load %s/openapi/%s.json; it requested %v", name, base, name, requests)
			}
		})
	}

	mu.Lock()
	defer mu.Unlock()
	for _, r := range requests {
		if err := loopback(r); err != nil {
			t.Errorf("a request left loopback: %s: %v", r, err)
		}
	}
	for _, p := range problems {
		t.Errorf("the page reported: %s", p)
	}
	t.Logf("%d requests, all to loopback", len(requests))
}

// unique are the operations listed, each once.
func unique(ops []listed) []listed {
	var out []listed
	for _, o := range ops {
		if !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// loopback checks that a request stays on this machine (or in the page: data:, blob:).
func loopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch u.Scheme {
	case "data", "blob", "about":
		return nil
	case "http", "https", "ws", "wss":
	default:
		return errors.New("not http")
	}
	if h := u.Hostname(); h == "localhost" {
		return nil
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("not a loopback address")
}
