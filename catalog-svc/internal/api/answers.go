package api

import (
	"bytes"
	"strconv"
	"sync"
	"time"
	"weak"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/bytelru"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/pricing"
)

// Kept answers (docs/catalog.md, "Kept answers"): a website asks the same searches and the
// same property pages far more often than the account changes, so search-rental and
// property-detail (get-all-property-info) keep their encoded answers, each under a key that
// names everything its bytes are computed from:
//
//   - what the catalog holds: the account's generation (catalog.Catalog.Generation, read
//     before anything else of the request, so an answer kept under it holds nothing older),
//     or for one property's detail its published value (a settings change, which could
//     change the languages, publishes new values of every property);
//   - what the request asks: the parsed, normalised parameters (searchKey), the brand, the
//     media base of the links;
//   - the time: an answer is served only from the moment it was computed until the first
//     moment any property it read can change its local date or its same-day cut-off's
//     verdict (turns), the only ways the clock enters the answers.
//
// An answer of an older generation or value is never served (its key is never asked again)
// and leaves by the LRU order; an expired one leaves when it is next asked. The bytes are the
// encoder's own, copied once: never a pooled buffer.

// defaultAnswerBytes bounds what the kept answers hold, bodies and keys together.
const defaultAnswerBytes = 64 << 20

// answerOverhead is what an entry costs beside its body and key strings (list element, map
// slot, times), roughly.
const answerOverhead = 256

// The reads whose answers are kept.
const (
	readSearch    = 1 + iota // search-rental
	readDetail               // property-detail of one property
	readDetailAll            // property-detail (get-all-property-info) of every property shown
)

// answerKey names one kept answer.
type answerKey struct {
	read  uint8
	acc   string
	gen   uint64                         // the account's generation (readSearch, readDetailAll)
	prop  weak.Pointer[catalog.Property] // the property's published value (readDetail)
	brand int64                          // the brand read; 0: the account as a whole
	base  string                         // the media base of the links
	langs string                         // the languages shown, in order (property-detail)
	query searchKey                      // readSearch
}

// answer is a kept answer: its body, served from from until until.
type answer struct {
	body        []byte
	from, until time.Time
}

// answers is a least-recently-used set of encoded answers bounded in bytes. Safe for
// concurrent use.
type answers struct {
	mu    sync.Mutex
	cache *bytelru.Cache[answerKey, answer]
}

func newAnswers(max int) *answers {
	return &answers{cache: bytelru.New[answerKey, answer](max, nil)}
}

// cost is what the answer under k costs the bound.
func cost(k answerKey, ans answer) int {
	return len(ans.body) + len(k.acc) + len(k.base) + len(k.langs) + k.query.size() + answerOverhead
}

// get returns the answer kept under k if it is valid at now; an expired one is dropped.
func (s *answers) get(k answerKey, now time.Time) (answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ans, ok := s.cache.Get(k)
	if !ok {
		return answer{}, false
	}
	if now.Before(ans.from) || !now.Before(ans.until) {
		s.cache.Remove(k)
		return answer{}, false
	}
	return ans, true
}

// put keeps ans under k, dropping the least recently used answers beyond the bound. An
// answer larger than an eighth of the bound is not kept.
func (s *answers) put(k answerKey, ans answer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.Add(k, ans, cost(k, ans))
}

// drop forgets the answer kept under k, if any.
func (s *answers) drop(k answerKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.Remove(k)
}

// Forget drops an erased account's answers.
func (s *answers) Forget(acc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cache.RemoveIf(func(k answerKey, _ answer) bool { return k.acc == acc })
}

// held is the number of answers kept and their cost in bytes (tests).
func (s *answers) held() (n, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cache.Len(), s.cache.Size()
}

// sendKept answers the request with the answer kept under k when there is one valid at now.
// applied is where the consumer stood before the request read anything (keptAt).
func (a *API) sendKept(c *fiber.Ctx, k answerKey, now time.Time, applied string) bool {
	ans, ok := a.answers.get(k, now)
	if !ok {
		return false
	}
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	keptAt(c, ans.until, applied)
	_ = c.Send(ans.body) // the kept bytes are never changed: fasthttp may send them as they are
	return true
}

// keptAt tells edge that the answer may be kept, until when, and where the consumer stood
// (events.Applied) before the request read the catalog: everything the answer was computed
// from is at least that (docs/catalog.md, "Answers kept at edge"). Nothing is told while the
// positions are unknown.
func keptAt(c *fiber.Ctx, until time.Time, applied string) {
	if applied == "" {
		return
	}
	c.Response().Header.Set(httpapi.HeaderKeepUntil, strconv.FormatInt(until.UnixMilli(), 10))
	c.Response().Header.Set(httpapi.HeaderApplied, applied)
}

// applied is where the consumer stands now ("" unknown): read before the account's
// generation or property, so that what the request then reads is at least as new.
func (a *API) applied() string {
	if a.Applied == nil {
		return ""
	}
	return a.Applied.String()
}

// sendAndKeep answers v as c.JSON does and keeps the bytes under k for the moments from now
// until until. An account the catalog holds nothing of (generation 0: unknown or erased)
// keeps nothing; nor does one erased while its answer was computed.
func (a *API) sendAndKeep(c *fiber.Ctx, k answerKey, v any, now, until time.Time, applied string) error {
	raw, err := c.App().Config().JSONEncoder(v)
	if err != nil {
		return err
	}
	body := bytes.Clone(raw) // ours alone, whatever the encoder does with its buffers
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	if k.gen == 0 && k.read != readDetail || !now.Before(until) {
		_ = c.Send(body)
		return nil
	}
	a.answers.put(k, answer{body: body, from: now, until: until})
	if a.catalog.Erased(k.acc) {
		// Erased while this answer was computed, maybe after its answers were forgotten.
		a.answers.drop(k)
	} else {
		keptAt(c, until, applied)
	}
	_ = c.Send(body)
	return nil
}

// turns is the first moment after now at which the local date, or the same-day cut-off's
// verdict (pricing.Property.BookingWindow), of any property added can change: until then
// every answer computed from those properties stays the same. Add each property the answer
// reads; properties sharing a zone and a cut-off cost one comparison.
type turns struct {
	now, until time.Time
	loc        *time.Location
	cut        *pricing.Clock
	any        bool
}

func newTurns(now time.Time) *turns { return &turns{now: now} }

func (t *turns) add(p *catalog.Property) {
	loc := p.Pricing.Location
	if loc == nil {
		loc = time.UTC
	}
	var cut *pricing.Clock
	if r := p.Pricing.Rates; r != nil {
		cut = r.Setting.SameDayUntil
	}
	if t.any && loc == t.loc && (cut == t.cut || cut != nil && t.cut != nil && *cut == *t.cut) {
		return
	}
	next := turn(t.now, loc, cut)
	if !t.any || next.Before(t.until) {
		t.until = next
	}
	t.any, t.loc, t.cut = true, loc, cut
}

// end is the moment the answer stops being valid: a day after now when no property was
// added (no property's clock enters the answer; the bound keeps entries from living on).
func (t *turns) end() time.Time {
	if !t.any {
		return t.now.Add(24 * time.Hour)
	}
	return t.until
}

// turn is the first moment after now at which, in loc, the date changes or the local time
// reaches the same-day cut-off (nil: none). Across a change of the zone's offset (daylight
// saving time) before that moment, local clock times are not linear: then the next minute,
// the booking window's own resolution.
func turn(now time.Time, loc *time.Location, cut *pricing.Clock) time.Time {
	local := now.In(loc)
	y, m, d := local.Date()
	next := time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	if cut != nil {
		at := time.Date(y, m, d, int(*cut)/60, int(*cut)%60, 0, 0, loc)
		if at.After(now) && at.Before(next) {
			next = at
		}
	}
	_, off := local.Zone()
	if _, offNext := next.Zone(); offNext != off || !next.After(now) {
		return now.Truncate(time.Minute).Add(time.Minute)
	}
	return next
}
