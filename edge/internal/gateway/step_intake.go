package gateway

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/semaphore"

	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/throttle"
	"github.com/vros/vros/libs/httpapi"
)

// Step: the body intake, before every route of edge's app (pipeline.go lists what follows
// it on the gateway's routes; docs/limits.md, "Memory budget"). Edge's app streams request
// bodies (httpapi.Options.StreamRequestBody), so fasthttp has read at most 8 KiB of a body
// when the first handler runs. Intake is that handler: it reads the rest, within MaxBody
// and within a per-replica budget of body bytes in flight shared fairly between client
// addresses, and decodes a Content-Encoding itself, within MaxBody once decoded. Every
// route then finds the plain body in memory, as before, and nothing else reads the stream.

const (
	// DefaultBodyMemory is the default budget of body bytes in flight in one replica
	// (VROS_EDGE_BODY_MEMORY_MIB).
	DefaultBodyMemory = 64 << 20
	// MinBodyMemory is the smallest budget: one request's largest body, read (MaxBody + 1
	// bytes to tell it is over) and decoded (MaxBody), must fit in it.
	MinBodyMemory = 2*MaxBody + 1<<20
	// DefaultIntakeWait is how long a request waits for its body's bytes to be free in the
	// budget before it is refused 503.
	DefaultIntakeWait = time.Second
	// maxEncodings bounds the codings of one Content-Encoding ("gzip, br").
	maxEncodings = 3
	// prefetched is how much of a body fasthttp reads before the first handler when it
	// streams bodies (fasthttp's readBodyWithStreaming).
	prefetched = 8 << 10
	// firstChunk is the first read of a body of unknown length (chunked); the buffer then
	// doubles, each step taken from the budget first.
	firstChunk = 64 << 10
)

// Intake reads request bodies within a memory budget. Its zero value is not usable: see
// NewIntake.
type Intake struct {
	budget  *semaphore.Weighted
	size    int64
	perAddr int64
	wait    time.Duration
	held    atomic.Int64
	// Metrics counts the bodies refused for their size (413) or for the budget (503); nil
	// counts nothing. Set it before the first request.
	Metrics *edgemetrics.Metrics

	mu    sync.Mutex
	addrs map[string]*addrShare
}

// addrShare is one client address's share of the budget, kept while requests of the
// address hold or wait for bytes.
type addrShare struct {
	sem  *semaphore.Weighted
	refs int
}

// NewIntake budgets memory bytes of bodies in flight (raw, and decoded while both are
// held), at most 2 × MaxBody of it for one client address (throttle.ClientKey). A request
// whose bytes are not free waits up to wait (≤ 0: DefaultIntakeWait), then is refused 503
// with Retry-After. memory must be at least MinBodyMemory.
func NewIntake(memory int64, wait time.Duration) (*Intake, error) {
	if memory < MinBodyMemory {
		return nil, fmt.Errorf("body memory budget of %d MiB is below %d MiB: one request's largest body, read and decoded, must fit in it",
			memory>>20, (MinBodyMemory+1<<20-1)>>20)
	}
	if wait <= 0 {
		wait = DefaultIntakeWait
	}
	return &Intake{budget: semaphore.NewWeighted(memory), size: memory, perAddr: min(memory, 2*MaxBody+1<<20), wait: wait,
		addrs: map[string]*addrShare{}}, nil
}

// Held is how many bytes of the budget requests hold now.
func (in *Intake) Held() int64 { return in.held.Load() }

// Handler is the middleware: registered before every route.
func (in *Intake) Handler(c *fiber.Ctx) error {
	req := c.Request()
	cl := req.Header.ContentLength()
	if cl > MaxBody {
		// Refused before a byte of it is read; the rest of it is never read, so the
		// connection cannot carry another request.
		c.Response().SetConnectionClose()
		in.Metrics.Rejected(c.UserContext(), edgemetrics.BodySize)
		return httpapi.TooLarge(MaxBody)
	}
	codings, err := contentCodings(req.Header.Peek(fiber.HeaderContentEncoding))
	if err != nil {
		c.Response().SetConnectionClose()
		return err
	}
	stream := req.BodyStream()
	if stream == nil && len(codings) == 0 {
		return c.Next()
	}
	r := in.reservation(c)
	defer r.release()

	var raw []byte
	if stream != nil {
		raw, err = r.readBody(stream, cl)
		if err != nil {
			c.Response().SetConnectionClose()
			return in.refused(c, err)
		}
	} else {
		raw = req.Body() // in memory already: an app that does not stream bodies
	}
	rawHeld := int64(cap(raw))
	decoded := false
	if len(codings) > 0 && len(raw) > 0 {
		plain, err := r.decode(raw, codings)
		if err != nil {
			return in.refused(c, err)
		}
		raw, decoded = plain, true
	}
	// The body is plain from here on: Fiber's c.Body() decodes nothing, and a route that
	// forwards it forwards plain bytes.
	req.Header.Del(fiber.HeaderContentEncoding)
	req.SetBodyRaw(raw)
	req.Header.SetContentLength(len(raw))
	if stream != nil && decoded {
		// The raw body is no longer referenced: only the decoded one stays held.
		r.give(rawHeld)
	}
	return c.Next()
}

// refused is the answer to a body intake could not read, counted: errBudget (its bytes
// were not free in the budget in time) is a 503 with Retry-After, a body over MaxBody
// (read or decoded) a 413, any other error (a body that is not valid in its coding, a
// connection that failed) its own answer.
func (in *Intake) refused(c *fiber.Ctx, err error) error {
	if errors.Is(err, errBudget) {
		in.Metrics.Rejected(c.UserContext(), edgemetrics.BodyBudget)
		c.Set(fiber.HeaderRetryAfter, "1")
		return httpapi.Unavailable("edge is reading too many request bodies at once; retry in 1 s")
	}
	if e, ok := errors.AsType[*httpapi.Error](err); ok && e.HTTP == fiber.StatusRequestEntityTooLarge {
		in.Metrics.Rejected(c.UserContext(), edgemetrics.BodySize)
	}
	return err
}

// errBudget is a body whose bytes were not free in the budget in time.
var errBudget = errors.New("body memory budget exhausted")

// reservation is what one request holds of the budget and of its address's share. It
// joins its address's share at its first take: a body fasthttp has read whole with the
// headers (most requests) costs no lock, map entry or timer.
type reservation struct {
	in    *Intake
	c     *fiber.Ctx
	key   string
	share *addrShare // nil until the first take
	ctx   context.Context
	stop  context.CancelFunc
	held  int64
}

func (in *Intake) reservation(c *fiber.Ctx) *reservation { return &reservation{in: in, c: c} }

// join enters the request into its client address's share and starts its wait.
func (r *reservation) join() {
	r.key = throttle.ClientKey(r.c)
	r.in.mu.Lock()
	s := r.in.addrs[r.key]
	if s == nil {
		s = &addrShare{sem: semaphore.NewWeighted(r.in.perAddr)}
		r.in.addrs[r.key] = s
	}
	s.refs++
	r.in.mu.Unlock()
	r.share = s
	r.ctx, r.stop = context.WithTimeout(r.c.UserContext(), r.in.wait)
}

// take reserves n more bytes, waiting until the request's wait is over.
func (r *reservation) take(n int64) error {
	if n <= 0 {
		return nil
	}
	if r.held+n > r.in.perAddr {
		return errBudget
	}
	if r.share == nil {
		r.join()
	}
	if err := r.share.sem.Acquire(r.ctx, n); err != nil {
		return errBudget
	}
	if err := r.in.budget.Acquire(r.ctx, n); err != nil {
		r.share.sem.Release(n)
		return errBudget
	}
	r.held += n
	r.in.held.Add(n)
	return nil
}

// give returns n bytes of what the request holds.
func (r *reservation) give(n int64) {
	n = min(n, r.held)
	if n <= 0 {
		return
	}
	r.held -= n
	r.in.held.Add(-n)
	r.in.budget.Release(n)
	r.share.sem.Release(n)
}

// release returns everything, once the request is answered.
func (r *reservation) release() {
	if r.share == nil {
		return // never took a byte
	}
	r.stop()
	r.give(r.held)
	r.in.mu.Lock()
	if r.share.refs--; r.share.refs == 0 {
		delete(r.in.addrs, r.key)
	}
	r.in.mu.Unlock()
}

// readBody reads a body of cl bytes (cl < 0: until its end, chunked) from stream, at most
// MaxBody.
func (r *reservation) readBody(stream io.Reader, cl int) ([]byte, error) {
	if cl >= 0 {
		// A body of at most 8 KiB fasthttp has read whole before any handler (within the
		// cost of a connection): it waits for nothing, not even behind a large one.
		if cl > prefetched {
			if err := r.take(int64(cl)); err != nil {
				return nil, err
			}
		}
		buf := make([]byte, cl)
		if _, err := io.ReadFull(stream, buf); err != nil {
			return nil, unreadable(err)
		}
		return buf, nil
	}
	buf, err := r.readAll(stream, MaxBody, unreadable)
	if err != nil {
		return nil, err
	}
	if len(buf) > MaxBody {
		return nil, httpapi.TooLarge(MaxBody)
	}
	return buf, nil
}

// readAll reads src to its end, or to limit+1 bytes, into a buffer that grows by doubling,
// each new buffer taken from the budget before it is made and the old one given back once
// copied. A read error is passed through fail.
func (r *reservation) readAll(src io.Reader, limit int, fail func(error) error) ([]byte, error) {
	size := min(firstChunk, limit+1)
	if err := r.take(int64(size)); err != nil {
		return nil, err
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > limit {
				return buf, nil
			}
			grown := min(2*cap(buf), limit+1)
			if err := r.take(int64(grown)); err != nil {
				return nil, err
			}
			next := make([]byte, len(buf), grown)
			copy(next, buf)
			r.give(int64(cap(buf)))
			buf = next
		}
		n, err := src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, fail(err)
		}
	}
}

func unreadable(err error) error {
	return httpapi.BadRequest("the request body could not be read: " + err.Error())
}

// contentCodings reads a Content-Encoding header: its codings in the order they were
// applied, identity left out. An unknown coding is refused 415.
func contentCodings(h []byte) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(string(h), ",") {
		coding := strings.ToLower(strings.TrimSpace(part))
		switch coding {
		case "", "identity":
			continue
		case "gzip", "x-gzip", "deflate":
		default:
			// Not br: its decoder holds a window of up to 16 MiB that the sender chooses,
			// before a byte is decoded (gzip's and deflate's are 32 KiB).
			return nil, unsupportedCoding(fmt.Sprintf("Content-Encoding %q is not supported: edge reads request bodies in gzip or deflate, or not encoded", coding))
		}
		out = append(out, coding)
	}
	if len(out) > maxEncodings {
		return nil, unsupportedCoding(fmt.Sprintf("Content-Encoding lists %d codings; edge decodes at most %d", len(out), maxEncodings))
	}
	return out, nil
}

func unsupportedCoding(msg string) *httpapi.Error {
	return &httpapi.Error{HTTP: http.StatusUnsupportedMediaType, Type: "unsupported_media_type", Status: httpapi.StatusInvalid, Message: msg}
}

// decode undoes codings (applied in that order) on raw. The decoded size is measured first,
// holding nothing but the decoders' windows: a body over MaxBody once decoded is refused
// 413 without a byte of it kept. Then exactly that many bytes are taken from the budget and
// the body is decoded into them.
func (r *reservation) decode(raw []byte, codings []string) ([]byte, error) {
	dec, err := decoder(raw, codings)
	if err != nil {
		return nil, err
	}
	n, err := io.CopyN(io.Discard, dec, MaxBody+1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, malformed(codings, err)
	}
	if n > MaxBody {
		e := httpapi.TooLarge(MaxBody)
		e.Message = fmt.Sprintf("request body is larger than %d bytes once decoded (Content-Encoding: %s)", MaxBody, strings.Join(codings, ", "))
		return nil, e
	}
	if err := r.take(n); err != nil {
		return nil, err
	}
	if dec, err = decoder(raw, codings); err != nil {
		return nil, err
	}
	out := make([]byte, n)
	if _, err := io.ReadFull(dec, out); err != nil {
		return nil, malformed(codings, err)
	}
	return out, nil
}

// decoder reads raw with codings undone, the last one applied first.
func decoder(raw []byte, codings []string) (io.Reader, error) {
	var rd io.Reader = bytes.NewReader(raw)
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip", "x-gzip":
			z, err := gzip.NewReader(rd)
			if err != nil {
				return nil, malformed(codings[i:i+1], err)
			}
			rd = z
		case "deflate":
			// HTTP's deflate is zlib's format (RFC 9110); some clients send bare deflate,
			// read as such when the body itself is not zlib's.
			z, err := zlib.NewReader(rd)
			switch b, ok := rd.(*bytes.Reader); {
			case err == nil:
				rd = z
			case ok:
				_, _ = b.Seek(0, io.SeekStart)
				rd = flate.NewReader(b)
			default:
				return nil, malformed(codings[i:i+1], err)
			}
		}
	}
	return rd, nil
}

func malformed(codings []string, err error) error {
	return httpapi.BadRequest(fmt.Sprintf("request body is not valid %s (its Content-Encoding): %v", strings.Join(codings, ", "), err))
}
