package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	ics "github.com/arran4/golang-ical"
	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// The iCal export (docs/ical.md, "Export"): GET /internal/ical/{token}.ics, mounted without
// the tenant check (edge forwards the public /ical/{token}.ics with an empty tenant): the
// token is the capability. The catalog finds the property by the token's hash; the feed is
// rendered once per change of the calendar (its generation) and the bytes served to every
// poller until the next change.

const (
	icalProdID = "-//vros//iCal export//EN"
	// icalPast is how far back the feed reaches: a booking or block whose last night is
	// before today − icalPast days is left out (channels need no old nights, and the feed of
	// a long-lived property stays small).
	icalPast = 60
	// icalCacheMax and icalCacheBytes bound the rendered feeds kept, in number and in bytes;
	// beyond either the cache starts again (feeds are rendered again on their next poll). A
	// feed of a busy property with imported blocks is tens of KB: the count alone would let
	// the cache outgrow the replica's memory.
	icalCacheMax   = 100_000
	icalCacheBytes = 64 << 20
)

// feed is a rendered calendar: its bytes, their ETag, and what it was rendered from.
type feed struct {
	account string
	gen     uint64
	since   pricing.Date // the first day shown: today − icalPast in the property's zone
	body    []byte
	etag    string
}

// feeds caches rendered calendars by token hash.
type feeds struct {
	mu    sync.RWMutex
	m     map[string]*feed
	bytes int // of the bodies in m
}

func (f *feeds) get(hash string) *feed {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.m[hash]
}

func (f *feeds) put(hash string, fd *feed) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil || len(f.m) >= icalCacheMax || f.bytes+len(fd.body) > icalCacheBytes {
		f.m, f.bytes = map[string]*feed{}, 0
	}
	// Of two renders of one calendar, the newer generation stays.
	if cur := f.m[hash]; cur == nil || cur.gen < fd.gen || (cur.gen == fd.gen && cur.since != fd.since) {
		f.remove(hash)
		f.m[hash] = fd
		f.bytes += len(fd.body)
	}
}

// remove deletes hash's feed; f.mu is held.
func (f *feeds) remove(hash string) {
	if cur := f.m[hash]; cur != nil {
		f.bytes -= len(cur.body)
		delete(f.m, hash)
	}
}

func (f *feeds) drop(hash string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remove(hash)
}

// Forget drops an erased account's feeds.
func (f *feeds) Forget(acc string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for h, fd := range f.m {
		if fd.account == acc {
			f.remove(h)
		}
	}
}

// icalToken reads "<token>.ics": 43 base64url characters (32 bytes, no padding).
func icalToken(file string) (string, bool) {
	tok, ok := strings.CutSuffix(file, ".ics")
	if !ok || len(tok) != 43 {
		return "", false
	}
	if _, err := base64.RawURLEncoding.DecodeString(tok); err != nil {
		return "", false
	}
	return tok, true
}

// ical: GET|HEAD /internal/ical/{token}.ics.
func (a *API) ical(c *fiber.Ctx) error {
	tok, ok := icalToken(c.Params("file"))
	if !ok {
		return icalNotFound(c)
	}
	sum := sha256.Sum256([]byte(tok))
	hash := hex.EncodeToString(sum[:])
	fd, err := a.feed(hash)
	if err != nil {
		return err
	}
	if fd == nil {
		return icalNotFound(c)
	}
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderETag, fd.etag)
	if etagMatches(c.Get(fiber.HeaderIfNoneMatch), fd.etag) {
		return c.SendStatus(fiber.StatusNotModified)
	}
	c.Set(fiber.HeaderContentType, "text/calendar; charset=utf-8")
	return c.Send(fd.body)
}

func icalNotFound(c *fiber.Ctx) error {
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpapi.NotFound(httpapi.StatusNotFound, "no such calendar")
}

// feed returns the calendar of the property whose token hashes to hash, rendered now or
// earlier from the same generation; nil when no live property has that link.
func (a *API) feed(hash string) (*feed, error) {
	p, gen, ok := a.catalog.CalendarGen(hash)
	if !ok {
		a.feeds.drop(hash)
		return nil, nil
	}
	now := a.now()
	// The first day shown moves at midnight in the property's zone.
	if fd := a.feeds.get(hash); fd != nil && fd.gen == gen && fd.since == p.Today(now).AddDays(-icalPast) {
		return fd, nil
	}
	cal, ok := a.catalog.CalendarOf(hash)
	if !ok {
		return nil, nil
	}
	since := cal.Property.Today(now).AddDays(-icalPast)
	body, err := renderICal(cal, since)
	if err != nil {
		return nil, fmt.Errorf("render the iCal feed of property %d: %w", cal.Property.Snap.PropertyID, err)
	}
	sum := sha256.Sum256(body)
	fd := &feed{account: cal.Account, gen: cal.Gen, since: since, body: body, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	a.feeds.put(hash, fd)
	return fd, nil
}

// etagMatches is If-None-Match's comparison (RFC 9110 13.1.2: weak, a list, or *).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// renderICal writes the calendar (RFC 5545): one all-day VEVENT per reserved booking, per
// live block (imported ones too) and per run of stopped nights whose last night is on or
// after since. Nothing of the guest
// and no memo: UID, dates, SUMMARY, SEQUENCE (the version) and DTSTAMP (when the booking or
// block was made, so that every replica renders the same bytes for one calendar and the
// strong ETag holds).
func renderICal(cal catalog.Calendar, since pricing.Date) ([]byte, error) {
	c := ics.NewCalendarFor("vros")
	c.SetProductId(icalProdID)
	c.SetCalscale("GREGORIAN")
	c.SetMethod(ics.MethodPublish)
	// control characters (a CR, say) would break the line: RFC 5545 allows none in a text
	// value, and the library escapes only \\, ;, , and newlines.
	c.SetXWRCalName(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, cal.Property.Snap.Content.Name))
	for _, b := range cal.Bookings {
		if b.Status != "reserved" || len(b.Nights) == 0 {
			continue
		}
		in, err1 := pricing.ParseDate(b.Checkin)
		out, err2 := pricing.ParseDate(b.Checkout)
		if err1 != nil || err2 != nil || !out.After(in) || out.AddDays(-1).Before(since) {
			continue
		}
		addEvent(c, "booking-"+strconv.FormatInt(b.BookingID, 10)+"@vros", in, out, b.CreatedAt, b.Version, "Reserved")
	}
	for _, b := range cal.Blocks {
		start, err1 := pricing.ParseDate(b.StartDate)
		end, err2 := pricing.ParseDate(b.EndDate)
		if err1 != nil || err2 != nil || end.Before(start) || end.Before(since) {
			continue
		}
		made, _ := time.Parse(time.DateTime, b.CreatedAt)
		addEvent(c, "block-"+strconv.FormatInt(b.BlockID, 10)+"@vros", start, end.AddDays(1), made, b.Version, "Not available")
	}
	// Stopped nights (a stop-sell of the standard plan), one event per run: a channel that
	// imports the feed stops selling them too. The UID is the run's dates, so the same run
	// is the same event at every render and replica (an import stays idempotent); a run that
	// grows or shrinks is another event, the old one gone. DTSTAMP is the property's creation
	// time, the same at every render.
	for _, run := range stoppedRuns(cal.Property, since) {
		uid := "stopsell-" + compactDate(run[0]) + "-" + compactDate(run[1]) + "@vros"
		addEvent(c, uid, run[0], run[1].AddDays(1), cal.Property.Snap.CreatedAt, 0, "Not available")
	}
	var buf bytes.Buffer
	// RFC 5545 3.1: lines end with CRLF (the library's default is LF).
	if err := c.SerializeTo(&buf, ics.WithNewLineWindows); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addEvent adds an all-day event from start to end (exclusive: the nights start..end−1).
func addEvent(c *ics.Calendar, uid string, start, end pricing.Date, made time.Time, version int64, summary string) {
	e := c.AddEvent(uid)
	e.SetDtStampTime(made.UTC())
	e.SetAllDayStartAt(day(start))
	e.SetAllDayEndAt(day(end))
	e.SetSequence(int(version))
	e.SetSummary(summary)
	e.SetTimeTransparency(ics.TransparencyOpaque)
}

// compactDate is d as YYYYMMDD.
func compactDate(d pricing.Date) string { return strings.ReplaceAll(d.String(), "-", "") }

func day(d pricing.Date) time.Time {
	y, m, dd := d.Civil()
	return time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
}
