package chantest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Exchange is one request vros made to a channel manager through a Recorder, and the answer
// it got (Status 0: held and never forwarded).
type Exchange struct {
	Seq      int
	At       time.Time
	Method   string
	Path     string
	Query    string
	Header   http.Header
	Body     []byte
	Status   int
	Response []byte
	Held     bool
}

// Recorder is a proxy in front of a fake channel manager: a connection's endpoint names the
// Recorder, which keeps every request vros sent and the fake's answer, in order. It can
// hold a request (Hold) so that a test kills the sender while the request is in flight.
type Recorder struct {
	URL    string
	target string
	srv    *httptest.Server
	client *http.Client

	mu      sync.Mutex
	log     []Exchange
	changed chan struct{} // closed and replaced at each new exchange
	holds   []*Hold
}

// Hold is a trap for one request: the first request that matches is recorded, kept
// unanswered (never forwarded to the fake) until Release, then answered 502.
type Hold struct {
	match   func(Exchange) bool
	Caught  chan Exchange
	release chan struct{}
	once    sync.Once
}

// Release lets the held request go (answered 502, the fake never saw it).
func (h *Hold) Release() { h.once.Do(func() { close(h.release) }) }

// NewRecorder starts a proxy to target (the fake's base URL).
func NewRecorder(target string) *Recorder {
	r := &Recorder{target: strings.TrimSuffix(target, "/"), changed: make(chan struct{}),
		client: &http.Client{Timeout: 5 * time.Minute}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	r.URL = r.srv.URL
	return r
}

// Close stops the proxy, releasing every hold first.
func (r *Recorder) Close() {
	r.mu.Lock()
	for _, h := range r.holds {
		h.Release()
	}
	r.mu.Unlock()
	r.srv.CloseClientConnections()
	r.srv.Close()
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	x := Exchange{At: time.Now(), Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
		Header: req.Header.Clone(), Body: body}
	r.mu.Lock()
	var hold *Hold
	for i, h := range r.holds {
		if h.match(x) {
			hold = h
			r.holds = append(r.holds[:i], r.holds[i+1:]...)
			break
		}
	}
	if hold != nil {
		x.Held = true
		x.Seq = r.appendLocked(x)
		r.mu.Unlock()
		hold.Caught <- x
		<-hold.release
		http.Error(w, "held by the test", http.StatusBadGateway)
		return
	}
	r.mu.Unlock()

	out, err := http.NewRequestWithContext(req.Context(), req.Method, r.target+req.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = req.Header.Clone()
	resp, err := r.client.Do(out)
	if err != nil {
		x.Status = http.StatusBadGateway
		x.Response = []byte(err.Error())
		r.mu.Lock()
		r.appendLocked(x)
		r.mu.Unlock()
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	x.Status, x.Response = resp.StatusCode, answer
	// Recorded before vros reads the answer: whoever waits on the record sees the request
	// the moment it could have taken effect.
	r.mu.Lock()
	r.appendLocked(x)
	r.mu.Unlock()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

func (r *Recorder) appendLocked(x Exchange) int {
	x.Seq = len(r.log) + 1
	r.log = append(r.log, x)
	close(r.changed)
	r.changed = make(chan struct{})
	return x.Seq
}

// Mark is the number of exchanges so far: Since(Mark()) is what comes after.
func (r *Recorder) Mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.log)
}

// Since is every exchange after mark, in order.
func (r *Recorder) Since(mark int) []Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	if mark > len(r.log) {
		mark = len(r.log)
	}
	return append([]Exchange(nil), r.log[mark:]...)
}

// Wait waits until cond holds of the exchanges after mark (checked at every new exchange and
// at least every 100 ms), or answers an error after within.
func (r *Recorder) Wait(mark int, within time.Duration, what string, cond func([]Exchange) bool) error {
	deadline := time.After(within)
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		if cond(r.Since(mark)) {
			return nil
		}
		select {
		case <-changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			return fmt.Errorf("not within %v: %s (%d exchanges since)", within, what, len(r.Since(mark)))
		}
	}
}

// Hold arms a trap for the next request that match accepts (see Hold).
func (r *Recorder) Hold(match func(Exchange) bool) *Hold {
	h := &Hold{match: match, Caught: make(chan Exchange, 1), release: make(chan struct{})}
	r.mu.Lock()
	r.holds = append(r.holds, h)
	r.mu.Unlock()
	return h
}

// Refused is every exchange after mark that the fake answered with a 4xx other than 429
// (a request it found invalid), for the tests to show that none was.
func (r *Recorder) Refused(mark int) []Exchange {
	var out []Exchange
	for _, x := range r.Since(mark) {
		if x.Status >= 400 && x.Status < 500 && x.Status != http.StatusTooManyRequests {
			out = append(out, x)
		}
	}
	return out
}
