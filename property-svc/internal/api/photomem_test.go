package api

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/tenancy"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/photo/phototest"
	"github.com/vros/vros/testkit/together"
)

// Issue 27 point 2: a small PNG that decodes to hundreds of MB, or a few slow links, must
// not take property-svc's memory or its photo processing from every other account.

// allocated is the bytes the process has allocated on the heap so far (a counter that
// only grows): the growth across a request bounds what the request can have held at once,
// whatever the garbage collector did meanwhile.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

var (
	bombsOnce sync.Once
	bombs     map[string]string // base64 of each PNG bomb, made once per test run
)

// pngBombs: PNGs of a few hundred KB under the 40-megapixel limit whose pixels take 320 MB
// decoded (16 bits per sample, RGBA: 8 bytes per pixel).
func pngBombs() map[string]string {
	bombsOnce.Do(func() {
		bombs = map[string]string{
			"6324x6324 16-bit RGBA (issue 27)": base64.StdEncoding.EncodeToString(phototest.ZeroPNG(6324, 6324, 16, phototest.RGBA, false)),
			"40 MP 16-bit RGBA":                base64.StdEncoding.EncodeToString(phototest.ZeroPNG(7300, 5479, 16, phototest.RGBA, false)),
			"40 MP 16-bit RGB":                 base64.StdEncoding.EncodeToString(phototest.ZeroPNG(7300, 5479, 16, phototest.RGB, false)),
		}
	})
	return bombs
}

// TestPhotoBombRefusedBeforeDecoding: each bomb is answered 400 naming photo.image with
// the memory it would take and the most allowed, nothing is stored, and the request
// allocates far less than the image's decoded size (so it was never decoded).
func TestPhotoBombRefusedBeforeDecoding(t *testing.T) {
	app, acc := newServer(t)
	createProperty(t, app, acc, "V1")
	const most = 64 << 20
	for name, img := range pngBombs() {
		t.Run(name, func(t *testing.T) {
			before := allocated()
			status, out := call(t, app, acc, photoPath, `{"action":"create","photo":{"internal_code":"V1","image":"`+img+`"}}`)
			grew := allocated() - before
			if status != 400 || !strings.Contains(string(out), `photo.image`) || !strings.Contains(string(out), "is too large") ||
				!strings.Contains(string(out), "8 bytes per pixel") || !strings.Contains(string(out), "the most is") {
				t.Errorf("answer %d %s; want 400 on photo.image: too large, at 8 bytes per pixel, the most allowed", status, out)
			}
			if grew > most {
				t.Errorf("the request allocated %d MiB; want under %d MiB (the image takes 320 MB decoded: it must be refused from its header)", grew>>20, most>>20)
			}
		})
	}
	if ids, _ := getOrder(t, app, acc, "V1"); len(ids) != 0 {
		t.Errorf("photos %v stored; want none", ids)
	}
}

// post is call for a goroutine other than the test's: it reports a failure to send instead
// of failing the test.
func post(app *fiber.App, acc, path, body string) (int, string, error) {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	tenancy.NewSigner(tenancy.CallerEdge, testKey).SetHeaders(req.Header.Set, tenancy.Tenant{AccountID: acc}, http.MethodPost, path, []byte(body), time.Now())
	resp, err := app.Test(req, -1)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), err
}

// deadlock bounds the wait for something that happens at once unless property-svc makes it
// wait behind other work; it is a hang detector, not a time budget for real work.
const deadlock = time.Minute

// TestSlowLinksDoNotHoldPhotoProcessing: while three photo links of one account are being
// downloaded (their server answers only when the test lets it), another account's uploaded
// photo is processed and answered. Before, a link was downloaded while holding one of the
// two render slots, so two slow links stalled photo processing for every account.
func TestSlowLinksDoNotHoldPhotoProcessing(t *testing.T) {
	app, _, slow := newServerPhotos(t, photo.Config{AllowPrivate: true, Timeout: time.Hour})
	other := strconv.FormatInt(7000+accounts.Add(1), 10)
	createProperty(t, app, slow, "V1")
	createProperty(t, app, other, "V1")

	img, err := base64.StdEncoding.DecodeString(pngPhoto(t, 32, 32))
	if err != nil {
		t.Fatal(err)
	}
	const links = 3
	arrived := make(chan struct{}, links)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(img)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(free) // runs first: the handlers return before the server closes

	var wg sync.WaitGroup
	answers := make([]string, links)
	for i := range links {
		wg.Go(func() {
			status, out, err := post(app, slow, photoPath, `{"action":"create","photo":{"internal_code":"V1","image":"`+srv.URL+`/p.png"}}`)
			answers[i] = fmt.Sprintf("%d %s %v", status, out, err)
		})
	}
	for i := range links {
		select {
		case <-arrived:
		case <-time.After(deadlock):
			t.Fatalf("only %d of %d link downloads started: the others wait for photo processing", i, links)
		}
	}

	done := make(chan string, 1)
	go func() {
		status, out, err := post(app, other, photoPath, `{"action":"create","photo":{"internal_code":"V1","image":"`+pngPhoto(t, 32, 32)+`"}}`)
		done <- fmt.Sprintf("%d %s %v", status, out, err)
	}()
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "200 ") {
			t.Errorf("another account's upload during the downloads: %s; want 200", got)
		}
	case <-time.After(deadlock):
		t.Errorf("another account's upload waited behind %d slow links", links)
		free()
		<-done
	}
	free()
	wg.Wait()
	for i, a := range answers {
		if !strings.HasPrefix(a, "200 ") {
			t.Errorf("link %d once released: %s; want 200", i, a)
		}
	}
}

// heapInUse is the bytes of heap objects, live or not yet swept.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestConcurrentLargestPhotosStayInTheBudget: eight accounts upload at once the largest
// photo the configured photo memory allows (its Need is exactly that memory); all are
// processed, one after the other, and the heap never grows by more than the photo memory.
// Need bounds every byte a photo's decoding and rendering allocate, so one photo at a time
// stays under it even with the garbage collector's slack (GOGC lowered to 10 here, as
// GOMEMLIMIT makes it near the container's limit). Before, two photos were decoded at
// once whatever their size, and any photo under 40 megapixels was accepted.
func TestConcurrentLargestPhotosStayInTheBudget(t *testing.T) {
	const uploads = 8
	raw := phototest.ZeroPNG(2600, 2000, 8, phototest.RGBA, false)
	need, err := photo.Inspect(raw, photo.Limits{Memory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	memory := need.Bytes
	app, _, _ := newServerPhotos(t, photo.Config{Limits: photo.Limits{Memory: memory}, MaxWait: time.Hour})
	accs := make([]string, uploads)
	for i := range accs {
		accs[i] = strconv.FormatInt(7000+accounts.Add(1), 10)
		createProperty(t, app, accs[i], "V1")
	}
	body := `{"action":"create","photo":{"internal_code":"V1","image":"` + base64.StdEncoding.EncodeToString(raw) + `"}}`

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapInUse()
	var peak atomic.Uint64
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() { // samples the heap while the uploads run
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapInUse(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	answers := make([]string, uploads)
	together.Run(uploads, func(i int) {
		status, out, err := post(app, accs[i], photoPath, body)
		answers[i] = fmt.Sprintf("%d %s %v", status, out, err)
	})
	close(stop)
	<-stopped
	for i, a := range answers {
		if !strings.HasPrefix(a, "200 ") {
			t.Errorf("upload %d: %s; want 200", i, a)
		}
	}
	grew := int64(peak.Load()) - int64(base)
	t.Logf("photo memory %d MiB; heap grew by at most %d MiB during %d concurrent uploads", memory>>20, grew>>20, uploads)
	if grew > memory {
		t.Errorf("the heap grew by %d MiB during %d concurrent uploads; want at most the photo memory, %d MiB", grew>>20, uploads, memory>>20)
	}
}
