package api

import (
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/shopspring/decimal"

	"github.com/vros/vros/catalog-svc/internal/catalog"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/pricing"
)

// search-rental: the website search (docs/catalog.md, "Website search"). The rules:
//
//   - every filter is cheap and reads a per-property record built once per published
//     property value (records, below), under the catalog's read lock;
//   - a stay's nights are checked in place (catalog.Nights) and its sales rules by the
//     pricing engine's own stay check (pricing.CheckDays, which Quote calls too) over the
//     engine's day rules of the standard plan (Property.Rules), and its booking window
//     (Property.BookingWindow);
//   - only the page returned is quoted, unless the order or a filter needs every
//     candidate's price; a page property that the quote refuses after all sends the search
//     back to quoting every candidate, so the count is never wrong.

// Search limits.
const (
	maxSearchLimit = 100
	maxFlexible    = 7
	maxKeyterm     = 200
	maxSearchGuest = 1000
)

// Sort keys (sortby).
const (
	sortDefault  = 1 // featured first, then by name
	sortName     = 2
	sortBedrooms = 3
	sortPrice    = 4
)

// searchRecord is what the search reads of one property value.
type searchRecord struct {
	p                       *catalog.Property
	name                    string // lower case, for the name order
	city                    string // lower case, trimmed
	typ                     string // lower case, trimmed
	text                    string // lower case name, city, state, address and type, for keyterm
	amenityIDs              []int
	amenityNames            []string // lower case names and default names
	aircon, parking, ocean  bool
	discounted              bool // has a length-of-stay discount tier
	mainPhoto               string
	bookable                bool // priced without error and has rates
	from                    atomic.Pointer[fromPrice]
	window                  atomic.Pointer[bookingWindow]
	maxGuestRule            int  // the pricing engine's MaxGuest
	noChildren              bool // the pricing engine's NoChildren
	rulesOnce               sync.Once
	rulesFrom               pricing.Date // first day of rules[0]: a month before the first day asked
	rules                   [ruleChunks]atomic.Pointer[ruleChunk]
	bedrooms, maxGuest      int
	featured, pets, smoking bool
	pid                     int64
	idText                  string
}

// The day rules of a property's standard plan (pricing.Property.Rules: minimum stays on
// arrival and through, maximum stay, may a stay start or end on the day, closed to arrival
// or departure, stop-sell) are read from the pricing engine 32 days at a time, on first use,
// for about four years from a month before the first day asked; dates outside are read from
// the engine each time. A record belongs to one published property value, so new rates,
// plans or restrictions are a new record.
const (
	ruleChunkDays = 32
	ruleChunks    = 48
)

// dayRule is one day's pricing.DayRules, packed in 8 bytes (a chunk stays 256 bytes), and
// whether the engine prices the day (ok).
type dayRule struct {
	minArrival, minThrough, maxStay int16 // 0-365 (pricing.MaxNights)
	flags                           uint8
}

const (
	ruleOK uint8 = 1 << iota
	ruleCheckin
	ruleCheckout
	ruleCTA
	ruleCTD
	ruleStop
)

func packRule(r pricing.DayRules, ok bool) dayRule {
	clamp := func(n int) int16 { return int16(min(max(n, 0), pricing.MaxNights+1)) }
	out := dayRule{minArrival: clamp(r.MinStayArrival), minThrough: clamp(r.MinStayThrough), maxStay: clamp(r.MaxStay)}
	for _, f := range [...]struct {
		set  bool
		flag uint8
	}{{ok, ruleOK}, {r.CheckinAllowed, ruleCheckin}, {r.CheckoutAllowed, ruleCheckout}, {r.ClosedToArrival, ruleCTA},
		{r.ClosedToDeparture, ruleCTD}, {r.StopSell, ruleStop}} {
		if f.set {
			out.flags |= f.flag
		}
	}
	return out
}

// rules unpacks the day's pricing.DayRules; a day the engine does not price has none (no
// stay may start or end on it).
func (d dayRule) rules() pricing.DayRules {
	if d.flags&ruleOK == 0 {
		return pricing.DayRules{}
	}
	return pricing.DayRules{MinStayArrival: int(d.minArrival), MinStayThrough: int(d.minThrough), MaxStay: int(d.maxStay),
		CheckinAllowed: d.flags&ruleCheckin != 0, CheckoutAllowed: d.flags&ruleCheckout != 0, ClosedToArrival: d.flags&ruleCTA != 0,
		ClosedToDeparture: d.flags&ruleCTD != 0, StopSell: d.flags&ruleStop != 0}
}

// ruleChunk is 32 days of rules, and the engine's verdicts on the stays arriving on each of
// them (sellable): bit n−1 of verdicts[j] says whether the stay of n nights (1–32) arriving
// on day j was decided, bit 32+n−1 whether it is sellable. A chunk belongs to one published
// property value, so its verdicts never go stale; 512 bytes.
type ruleChunk struct {
	days     [ruleChunkDays]dayRule
	verdicts [ruleChunkDays]atomic.Uint64
}

// chunk returns the chunk of day rules holding d and its first day, read from the engine on
// first use; nil outside the chunks' span.
func (r *searchRecord) chunk(d pricing.Date) (*ruleChunk, pricing.Date) {
	r.rulesOnce.Do(func() { r.rulesFrom = d.AddDays(-31) })
	i := pricing.DaysBetween(r.rulesFrom, d)
	if i < 0 || i >= ruleChunkDays*ruleChunks {
		return nil, pricing.Date{}
	}
	start := r.rulesFrom.AddDays(i / ruleChunkDays * ruleChunkDays)
	ch := r.rules[i/ruleChunkDays].Load()
	if ch == nil {
		ch = new(ruleChunk)
		for j := range ch.days {
			ch.days[j] = r.readRule(start.AddDays(j))
		}
		r.rules[i/ruleChunkDays].Store(ch)
	}
	return ch, start
}

func (r *searchRecord) dayRule(d pricing.Date) dayRule {
	ch, start := r.chunk(d)
	if ch == nil {
		return r.readRule(d)
	}
	return ch.days[pricing.DaysBetween(start, d)]
}

func (r *searchRecord) readRule(d pricing.Date) dayRule {
	_, ok := pricing.NightPrice(r.p.Pricing, d, 1)
	return packRule(r.p.Pricing.Rules(0, d), ok)
}

// sellable is pricing.CheckDays's verdict on the stay in→out on the standard plan, over the
// record's day rules (a day the engine does not price allows nothing). A website asks the
// same stays again and again (pages, orders, filters, every visitor's dates), and CheckDays
// reads every night of the stay: its verdicts on stays of up to 32 nights are kept in the
// arrival's chunk.
func (r *searchRecord) sellable(in, out pricing.Date) bool {
	arrival, first := r.chunk(in)
	n := pricing.DaysBetween(in, out)
	var slot *atomic.Uint64
	var bit uint64
	if arrival != nil && n >= 1 && n <= 32 {
		slot, bit = &arrival.verdicts[pricing.DaysBetween(first, in)], 1<<(n-1)
		if v := slot.Load(); v&bit != 0 {
			return v&(bit<<32) != 0
		}
	}
	// CheckDays reads consecutive days: keep the chunk at hand.
	ch, start := arrival, first
	day := func(d pricing.Date) pricing.DayRules {
		i := pricing.DaysBetween(start, d)
		if ch == nil || i < 0 || i >= ruleChunkDays {
			if ch, start = r.chunk(d); ch == nil {
				return r.readRule(d).rules()
			}
			i = pricing.DaysBetween(start, d)
		}
		return ch.days[i].rules()
	}
	ok := pricing.CheckDays(in, out, 0, day) == nil
	if slot != nil {
		if ok {
			bit |= bit << 32
		}
		slot.Or(bit)
	}
	return ok
}

// bookingWindow is the property's booking window (Property.BookingWindow) during one minute:
// the window reads the local date and the local time to the minute, nothing finer.
type bookingWindow struct {
	minute      int64 // Unix time ÷ 60
	first, last pricing.Date
}

func (r *searchRecord) bookingWindow(now time.Time) (first, last pricing.Date) {
	minute := now.Unix() / 60
	if w := r.window.Load(); w != nil && w.minute == minute {
		return w.first, w.last
	}
	w := &bookingWindow{minute: minute}
	w.first, w.last = r.p.Pricing.BookingWindow(now)
	r.window.Store(w)
	return w.first, w.last
}

// fromPrice is the lowest nightly price (one guest) over the 365 nights from day, and the
// highest (high: the span property-detail, get-min-max-price-property and default-config
// show).
type fromPrice struct {
	day   pricing.Date
	price decimal.Decimal
	high  decimal.Decimal
	ok    bool
}

// recordsOf returns the search records of the account's properties props, in their order,
// building those of new properties and adding them to records at once (each Add copies the
// account's memo).
func (a *API) recordsOf(acc string, props []*catalog.Property) []*searchRecord {
	known := a.records.Snapshot(acc)
	out := make([]*searchRecord, len(props))
	var built map[*catalog.Property]*searchRecord
	for i, p := range props {
		r, ok := known[p]
		if !ok {
			r = newRecord(p)
			if built == nil {
				built = map[*catalog.Property]*searchRecord{}
			}
			built[p] = r
		}
		out[i] = r
	}
	a.records.Add(acc, built, a.catalog.Live)
	return out
}

func newRecord(p *catalog.Property) *searchRecord {
	ct := p.Snap.Content
	r := &searchRecord{p: p, name: strings.ToLower(ct.Name), city: strings.ToLower(strings.TrimSpace(ct.City)),
		typ: strings.ToLower(strings.TrimSpace(ct.Type)), bedrooms: ct.Bedrooms, maxGuest: ct.MaxGuest, featured: ct.IsFeatured,
		pets: ct.AllowPet != nil && *ct.AllowPet, smoking: ct.AllowSmoking != nil && *ct.AllowSmoking, pid: p.Snap.PropertyID,
		idText: strconv.FormatInt(p.Snap.PropertyID, 10), bookable: p.PricingErr == nil && p.Snap.Rates != nil}
	r.maxGuestRule, r.noChildren = p.Pricing.MaxGuest, p.Pricing.NoChildren
	r.text = strings.ToLower(strings.Join([]string{ct.Name, ct.City, ct.State, ct.Address, ct.Type}, "\n"))
	if am := p.Snap.Amenities; am != nil {
		for _, x := range am.Items {
			r.amenityIDs = append(r.amenityIDs, x.ID)
			for _, n := range []string{x.Name, x.DefaultName} {
				if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
					r.amenityNames = append(r.amenityNames, n)
				}
			}
			words := strings.ToLower(x.Name + " " + x.DefaultName + " " + x.Class)
			r.aircon = r.aircon || containsAny(words, "air condition", "air-condition", "aircon", "a/c")
			r.parking = r.parking || strings.Contains(words, "parking")
			r.ocean = r.ocean || containsAny(words, "ocean", "sea view", "seaview", "beach")
		}
	}
	if r.bookable {
		for _, l := range p.Pricing.Rates.LOS {
			r.discounted = r.discounted || l.Days >= 1 && l.Percent.Sign() > 0
		}
	}
	if ph, ok := mainPhoto(p); ok {
		r.mainPhoto = ph.Key
	}
	return r
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// fromPrice returns the record's lowest and highest nightly price over the year from today,
// computed once a day per property value.
func (r *searchRecord) fromPrice(now time.Time) *fromPrice {
	today := r.p.Today(now)
	if f := r.from.Load(); f != nil && f.day == today {
		return f
	}
	f := &fromPrice{day: today}
	if r.bookable {
		for i := 0; i < 365; i++ {
			n, ok := pricing.NightPrice(r.p.Pricing, today.AddDays(i), 1)
			if !ok {
				break
			}
			if !f.ok || n.Price.LessThan(f.price) {
				f.price = n.Price
			}
			if !f.ok || n.Price.GreaterThan(f.high) {
				f.high = n.Price
			}
			f.ok = true
		}
	}
	r.from.Store(f)
	return f
}

func (r *searchRecord) hasAmenity(want string, id int) bool {
	if id > 0 {
		for _, x := range r.amenityIDs {
			if x == id {
				return true
			}
		}
	}
	for _, n := range r.amenityNames {
		if n == want {
			return true
		}
	}
	return false
}

// searchQuery is a parsed search-rental request.
type searchQuery struct {
	in, out          pricing.Date // zero without dates
	nights           int
	flexible         int
	adults, children int
	guests           bool // numberadults or children sent
	keyterm, city    string
	bedrooms         int
	minPrice         decimal.Decimal
	maxPrice         decimal.Decimal
	hasMin, hasMax   bool
	only             map[int64]bool // category and tag members (intersection); nil: any
	categoryID       int            // the category_id sent (only holds its members); 0: none
	tagID            int            // the tag_id sent (only holds its members); 0: none
	featured         bool
	pets, smoking    bool
	aircon, parking  bool
	ocean            bool
	amenities        []string // lower case
	amenityIDs       []int    // parallel to amenities; 0 when not a number
	propertyID       int64
	sortBy           int
	desc             bool
	page, limit      int
	discountsOnly    bool
	shifts           []int // flexible day shifts, in order of preference
	ins, outs        []string
	now              time.Time
	pricedAll        bool // every candidate must be quoted
	// brand lists the properties of the brand searched, each once; nil: every property.
	brand []int64
	// turns, when not nil, learns each property the search reads, for how long the answer
	// stays valid (answers.go).
	turns *turns
}

// searchKey is a parsed search as a kept answer's key (answers.go): every parameter that
// changes the answer, normalised, and none that does not; what the query derives from them
// (the nights, the flexible shifts, the category's and tag's members, the amenity ids) is
// not repeated. TestSearchKeyCoversQuery makes each new searchQuery field choose.
type searchKey struct {
	in, out                                  pricing.Date
	flexible, adults, children, bedrooms     int
	guests                                   bool
	keyterm, city                            string
	minPrice, maxPrice                       string // "" when not sent
	categoryID, tagID                        int
	featured, pets, smoking, aircon, parking bool
	ocean, discountsOnly, desc               bool
	amenities                                string // each lower-case value, length-prefixed
	propertyID                               int64
	sortBy, page, limit                      int
}

func (q *searchQuery) key() searchKey {
	k := searchKey{in: q.in, out: q.out, flexible: q.flexible, adults: q.adults, children: q.children, bedrooms: q.bedrooms,
		guests: q.guests, keyterm: q.keyterm, city: q.city, categoryID: q.categoryID, tagID: q.tagID, featured: q.featured,
		pets: q.pets, smoking: q.smoking, aircon: q.aircon, parking: q.parking, ocean: q.ocean, discountsOnly: q.discountsOnly,
		desc: q.desc, propertyID: q.propertyID, sortBy: q.sortBy, page: q.page, limit: q.limit}
	if q.hasMin {
		k.minPrice = q.minPrice.String()
	}
	if q.hasMax {
		k.maxPrice = q.maxPrice.String()
	}
	if len(q.amenities) > 0 {
		var b strings.Builder
		for _, s := range q.amenities {
			b.WriteString(strconv.Itoa(len(s)))
			b.WriteByte(':')
			b.WriteString(s)
		}
		k.amenities = b.String()
	}
	return k
}

// size is what the key's strings hold.
func (k *searchKey) size() int {
	return len(k.keyterm) + len(k.city) + len(k.minPrice) + len(k.maxPrice) + len(k.amenities)
}

func (a *API) parseSearch(in *input, st catalog.Settings) (*searchQuery, error) {
	o := in.o
	q := &searchQuery{now: a.now(), sortBy: sortDefault, page: 1, limit: st.Search.DefaultLimit}
	q.limit = min(max(q.limit, 1), maxSearchLimit)
	ci, okIn := in.date("checkin", false)
	co, okOut := in.date("checkout", false)
	switch {
	case okIn && okOut:
		switch n := pricing.DaysBetween(ci, co); {
		case n < 1:
			in.v.Add("checkout", "must be after checkin")
		case n > pricing.MaxNights:
			in.v.Addf("checkout", "a stay may last at most %d nights", pricing.MaxNights)
		default:
			q.in, q.out, q.nights = ci, co, n
		}
	case okIn && !o.Has("checkout") || okIn && o.Empty("checkout"):
		in.v.Add("checkout", "is required with checkin")
	case okOut && !o.Has("checkin") || okOut && o.Empty("checkin"):
		in.v.Add("checkin", "is required with checkout")
	}
	if n, ok := o.Int("flexible", fields.Int{Max: maxFlexible}); ok {
		q.flexible = n
	}
	if n, ok := o.Int("numberadults", fields.Int{Max: maxSearchGuest}); ok {
		q.adults, q.guests = n, true
	}
	if n, ok := o.Int("children", fields.Int{Max: maxSearchGuest}); ok {
		q.children, q.guests = n, q.guests || n > 0
	}
	if q.adults < 1 {
		q.adults = 1 // a search form's "any" is one adult
	}
	if s, ok := o.String("keyterm", fields.Str{Max: maxKeyterm}); ok {
		q.keyterm = strings.ToLower(strings.TrimSpace(s))
	}
	if s, ok := o.String("city", fields.Str{Max: maxKeyterm}); ok {
		q.city = strings.ToLower(strings.TrimSpace(s))
	}
	if n, ok := o.Int("bedrooms", fields.Int{Max: 1000}); ok {
		q.bedrooms = n
	}
	q.minPrice, q.hasMin = o.Decimal("minprice", fields.Dec{MaxScale: 4})
	q.maxPrice, q.hasMax = o.Decimal("maxprice", fields.Dec{MaxScale: 4})
	if q.hasMin && q.hasMax && q.maxPrice.LessThan(q.minPrice) {
		in.v.Add("maxprice", "must not be below minprice")
	}
	q.featured, _ = o.Bool("isfeatured", false)
	q.pets, _ = o.Bool("allowpet", false)
	q.smoking, _ = o.Bool("allowsmoking", false)
	q.aircon, _ = o.Bool("airconditioner", false)
	q.parking, _ = o.Bool("parking", false)
	q.ocean, _ = o.Bool("ocean", false)
	q.discountsOnly, _ = o.Bool("discountsonly", false)
	_, _ = o.Bool("includebookingprice", false) // with dates the totals are always there
	for _, name := range []string{"amenity", "amenity[]"} {
		var list []string
		switch o.Kind(name) {
		case fields.KindAbsent, fields.KindNull:
			continue
		case fields.KindString, fields.KindNumber:
			if s, ok := o.String(name, fields.Str{Max: maxKeyterm}); ok && strings.TrimSpace(s) != "" {
				list = []string{s}
			}
		default:
			list, _ = o.Strings(name, fields.List{Max: 100}, fields.Str{Max: maxKeyterm})
		}
		for _, s := range list {
			s = strings.ToLower(strings.TrimSpace(s))
			id, _ := strconv.Atoi(s)
			q.amenities, q.amenityIDs = append(q.amenities, s), append(q.amenityIDs, id)
		}
	}
	if id, ok := o.Int("category_id", fields.Int{Min: 1, Max: maxID}); ok {
		q.categoryID = id
		found := false
		for _, cat := range st.Categories {
			if cat.ID == int64(id) {
				found = true
				q.restrict(cat.Properties)
			}
		}
		if !found {
			in.v.Add("category_id", "no category has this id")
		}
	}
	if id, ok := o.Int("tag_id", fields.Int{Min: 1, Max: maxID}); ok {
		q.tagID = id
		found := false
		for _, t := range st.Tags {
			if t.ID == int64(id) {
				found = true
				q.restrict(t.Properties)
			}
		}
		if !found {
			in.v.Add("tag_id", "no tag has this id")
		}
	}
	q.propertyID = in.readPropertyID()
	if n, ok := o.Int("sortby", fields.Int{OneOf: []int64{sortDefault, sortName, sortBedrooms, sortPrice}}); ok {
		q.sortBy = n
	}
	if s, ok := o.String("sorttype", fields.Str{OneOf: []string{"asc", "desc"}, IgnoreCase: true}); ok {
		q.desc = s == "desc"
	}
	if n, ok := o.Int("page", fields.Int{Min: 1, Max: maxID}); ok {
		q.page = n
	}
	if n, ok := o.Int("limit", fields.Int{Min: 1, Max: maxSearchLimit}); ok {
		q.limit = n
	}
	if err := in.err(); err != nil {
		return nil, err
	}
	if !q.in.IsZero() {
		q.shifts = append(q.shifts, 0)
		for s := 1; s <= q.flexible; s++ {
			q.shifts = append(q.shifts, -s, s)
		}
		for _, s := range q.shifts {
			q.ins = append(q.ins, q.in.AddDays(s).String())
			q.outs = append(q.outs, q.out.AddDays(s).String())
		}
		q.pricedAll = q.sortBy == sortPrice || q.hasMin || q.hasMax || q.discountsOnly
	}
	return q, nil
}

// restrict keeps only the listed properties (a category's or a tag's).
func (q *searchQuery) restrict(ids []int64) {
	next := make(map[int64]bool, len(ids))
	for _, id := range ids {
		if q.only == nil || q.only[id] {
			next[id] = true
		}
	}
	q.only = next
}

// keep applies the filters that need neither dates nor prices.
func (q *searchQuery) keep(r *searchRecord) bool {
	switch {
	case q.propertyID != 0 && r.pid != q.propertyID,
		q.only != nil && !q.only[r.pid],
		q.bedrooms > 0 && r.bedrooms < q.bedrooms,
		q.guests && r.maxGuest > 0 && q.adults+q.children > r.maxGuest,
		q.featured && !r.featured,
		q.pets && !r.pets,
		q.smoking && !r.smoking,
		q.aircon && !r.aircon,
		q.parking && !r.parking,
		q.ocean && !r.ocean,
		q.city != "" && r.city != q.city,
		q.keyterm != "" && !strings.Contains(r.text, q.keyterm),
		!q.in.IsZero() && !r.bookable:
		return false
	}
	for i, want := range q.amenities {
		if !r.hasAmenity(want, q.amenityIDs[i]) {
			return false
		}
	}
	return true
}

// hit is a listed property: its record, and with dates the stay found (kept small: the
// hits of a whole account are collected and ordered on every search).
type hit struct {
	r     *searchRecord
	st    *stay  // the stay's quote, once quoted
	free  uint16 // bit i: the nights of shift i are free
	shift int16  // index into q.shifts of the stay listed
}

// stay is a quoted stay, or without dates a property's "from" price.
type stay struct {
	quote   *pricing.Result
	nightly decimal.Decimal // the sort and filter price
	priced  bool
}

// stayRules reports whether the standard plan sells the stay as pricing.Quote decides it:
// guests, children, booking window, then the engine's one stay check (pricing.CheckDays:
// stop-sell, closed to arrival and departure, check-in and check-out days, minimum stays,
// maximum stay) over the record's day rules, without pricing the stay. It allocates nothing.
func stayRules(r *searchRecord, in, out pricing.Date, adults, children int, now time.Time) bool {
	if r.maxGuestRule > 0 && adults+children > r.maxGuestRule || children > 0 && r.noChildren {
		return false
	}
	first, last := r.bookingWindow(now)
	if in.Before(first) || !last.IsZero() && in.After(last) {
		return false
	}
	return r.sellable(in, out)
}

// quote prices the hit's stay as getinfo does (the property's default taxes and services).
func (q *searchQuery) quote(h *hit) bool {
	i := h.shift
	res, err := pricing.Quote(h.r.p.Pricing, pricing.Request{Checkin: q.in.AddDays(q.shifts[i]), Checkout: q.out.AddDays(q.shifts[i]),
		Adults: q.adults, Children: q.children, Now: q.now})
	if err != nil {
		return false
	}
	h.st = &stay{quote: &res, priced: true, nightly: res.TotalRent.DivRound(decimal.NewFromInt(int64(res.NightCount)), res.Scale)}
	return true
}

// hitBuffers recycles the hit lists: a search collects one entry per candidate property.
var hitBuffers = sync.Pool{New: func() any { return new([]hit) }}

// errRequote: a page property was refused by its quote; the search quotes every candidate.
var errRequote = errors.New("requote")

func (a *API) searchRental(c *fiber.Ctx) error {
	acc := account(c)
	applied := a.applied()
	gen := a.catalog.Generation(acc) // before anything else of the account is read
	in := readInput(c)
	sc := a.readScope(c, in)
	q, err := a.parseSearch(in, sc.st)
	if err != nil {
		return err
	}
	q.brand = sc.list
	if q.propertyID != 0 {
		if _, err := a.scopedProperty(c, sc, q.propertyID); err != nil {
			return err
		}
	}
	base := a.mediaBase(c)
	key := answerKey{read: readSearch, acc: acc, gen: gen, brand: sc.brandID(), base: base, query: q.key()}
	if a.sendKept(c, key, q.now, applied) {
		return nil
	}
	q.turns = newTurns(q.now)
	buf := hitBuffers.Get().(*[]hit)
	defer func() {
		clear((*buf)[:cap(*buf)]) // drop the records' pointers until the next search
		hitBuffers.Put(buf)
	}()
	hits := a.searchHits(acc, q, (*buf)[:0])
	*buf = hits[:0]
	total, page, err := q.paginate(hits)
	if errors.Is(err, errRequote) {
		q.pricedAll = true
		hits = a.searchHits(acc, q, hits[:0])
		*buf = hits[:0]
		total, page, _ = q.paginate(hits)
	}
	ans := searchAnswer{PropertyCount: total, PageCount: (total + q.limit - 1) / q.limit, Page: q.page, Offset: (q.page - 1) * q.limit,
		Limit: q.limit, ImagePath: base + "/media/", Properties: make([]searchProperty, 0, len(page))}
	for _, h := range page {
		ans.Properties = append(ans.Properties, a.summary(h, q, base))
	}
	return a.sendAndKeep(c, key, ans, q.now, q.turns.end(), applied)
}

// scan is catalog.Scan over the properties ids lists (a brand's, scope.list), or over every
// property of the account when ids is nil: a brand's website reads its own properties only.
func (a *API) scan(acc string, ids []int64, fn func(*catalog.Property, catalog.Nights)) {
	if ids != nil {
		a.catalog.ScanIDs(acc, ids, fn)
		return
	}
	a.catalog.Scan(acc, fn)
}

// searchHits finds the listed properties, in the order asked. With dates and pricedAll,
// every hit is quoted; otherwise none is yet.
func (a *API) searchHits(acc string, q *searchQuery, hits []hit) []hit {
	var misses []hit // properties without a record yet
	known := a.records.Snapshot(acc)
	a.scan(acc, q.brand, func(p *catalog.Property, n catalog.Nights) {
		if q.turns != nil {
			q.turns.add(p)
		}
		r, ok := known[p]
		if ok && !q.keep(r) {
			return
		}
		h := hit{r: r}
		if !q.in.IsZero() {
			for i := range q.shifts {
				if n.Free(q.ins[i], q.outs[i]) {
					h.free |= 1 << i
				}
			}
			if h.free == 0 {
				return
			}
		}
		if !ok {
			h.r = &searchRecord{p: p}
			misses = append(misses, h)
			return
		}
		hits = append(hits, h)
	})
	if len(misses) > 0 {
		built := make(map[*catalog.Property]*searchRecord, len(misses))
		for _, h := range misses {
			h.r = newRecord(h.r.p)
			built[h.r.p] = h.r
			if q.keep(h.r) {
				hits = append(hits, h)
			}
		}
		a.records.Add(acc, built, a.catalog.Live)
	}
	out := hits[:0]
	for _, h := range hits {
		if !q.in.IsZero() {
			h.shift = -1
			for i, s := range q.shifts {
				if h.free&(1<<i) != 0 && stayRules(h.r, q.in.AddDays(s), q.out.AddDays(s), q.adults, q.children, q.now) {
					h.shift = int16(i)
					break
				}
			}
			if h.shift < 0 || q.pricedAll && !q.quote(&h) {
				continue
			}
			if q.discountsOnly && h.st.quote.DiscountTotal.Sign() == 0 {
				continue
			}
		} else {
			if q.discountsOnly && !h.r.discounted {
				continue
			}
			if q.sortBy == sortPrice || q.hasMin || q.hasMax {
				f := h.r.fromPrice(q.now)
				h.st = &stay{nightly: f.price, priced: f.ok}
			}
		}
		if (q.hasMin || q.hasMax) && (!h.st.priced || q.hasMin && h.st.nightly.LessThan(q.minPrice) ||
			q.hasMax && h.st.nightly.GreaterThan(q.maxPrice)) {
			continue
		}
		out = append(out, h)
	}
	q.order(out)
	return out
}

// order sorts the hits, or only as far as the page needs: the first page*limit hits,
// picked in one pass over the others when they are few.
func (q *searchQuery) order(hits []hit) {
	k := q.page * q.limit
	if k >= len(hits) || k > 256 {
		slices.SortFunc(hits, q.cmp)
		return
	}
	top := hits[:k]
	slices.SortFunc(top, q.cmp)
	for i := k; i < len(hits); i++ {
		if q.cmp(hits[i], top[k-1]) >= 0 {
			continue
		}
		// hits[i] belongs in the top: insert it, moving the top's last out to i.
		j, _ := slices.BinarySearchFunc(top, hits[i], q.cmp)
		x := hits[i]
		hits[i] = top[k-1]
		copy(top[j+1:], top[j:k-1])
		top[j] = x
	}
}

// cmp is the search order; ties go by property id, so pages never overlap.
func (q *searchQuery) cmp(x, y hit) int {
	a, b := x.r, y.r
	c := 0
	switch q.sortBy {
	case sortName:
		c = strings.Compare(a.name, b.name)
	case sortBedrooms:
		c = a.bedrooms - b.bedrooms
	case sortPrice:
		xp, yp := x.st != nil && x.st.priced, y.st != nil && y.st.priced
		if xp != yp { // unpriced last, whatever the direction
			if xp {
				return -1
			}
			return 1
		}
		if xp {
			c = x.st.nightly.Cmp(y.st.nightly)
		}
	default:
		if a.featured != b.featured {
			if a.featured {
				return -1
			}
			return 1
		}
		c = strings.Compare(a.name, b.name)
	}
	if q.desc {
		c = -c
	}
	if c != 0 {
		return c
	}
	return cmp.Compare(a.pid, b.pid)
}

// paginate returns the count and the page, quoting the page's stays when they are not
// quoted yet.
func (q *searchQuery) paginate(hits []hit) (int, []hit, error) {
	from := (q.page - 1) * q.limit
	if from >= len(hits) {
		return len(hits), nil, nil
	}
	to := min(from+q.limit, len(hits))
	page := hits[from:to]
	if !q.in.IsZero() && !q.pricedAll {
		for i := range page {
			if !q.quote(&page[i]) {
				return 0, nil, errRequote
			}
		}
	}
	return len(hits), page, nil
}

type searchAnswer struct {
	PropertyCount int              `json:"property_count"`
	PageCount     int              `json:"page_count"`
	Page          int              `json:"page"`
	Offset        int              `json:"offset"`
	Limit         int              `json:"limit"`
	ImagePath     string           `json:"image_path"`
	Properties    []searchProperty `json:"properties"`
}

// searchProperty is a property's summary in search-rental and get-property-related. The
// stay fields are there only when the search has dates.
type searchProperty struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Type         string       `json:"type"`
	Brief        string       `json:"brief"`
	Address      string       `json:"address"`
	City         string       `json:"city"`
	Bedroom      string       `json:"bedroom"`
	Bathroom     string       `json:"bathroom"`
	MaxGuest     string       `json:"maxguest"`
	IsFeatured   string       `json:"isfeatured"`
	AllowPet     string       `json:"allowpet"`
	AllowSmoking string       `json:"allowsmoking"`
	Latitude     string       `json:"latitude"`
	Longitude    string       `json:"longitude"`
	MinPrice     json.Number  `json:"minprice"`
	Currency     string       `json:"currency"`
	ImagePath    string       `json:"image_path"`
	ImageSmall   string       `json:"image_small"`
	Image317x179 string       `json:"image_317_179"`
	ImageH179    string       `json:"image_h_179"`
	ImageW800    string       `json:"image_w_800"`
	Checkin      string       `json:"checkin,omitempty"`
	Checkout     string       `json:"checkout,omitempty"`
	QtyOfNights  int          `json:"qtyofnights,omitempty"`
	Nightly      *json.Number `json:"nightly,omitempty"`
	TotalRent    *json.Number `json:"totalRent,omitempty"`
	GrandTotal   *json.Number `json:"grandTotal,omitempty"`

	// The WordPress plugin's fields (docs/compatibility.md, "The WordPress plugin"), after
	// the fields above so that positional readers are unaffected.
	BaseName            string            `json:"base_name"`
	RateLabel           string            `json:"rateLabel"`
	RateValue           string            `json:"rateValue"`
	RateToolTip         string            `json:"rateToolTip"`
	DiscountTexts       []string          `json:"discounttexts"`
	DiscountDescription []ordered[string] `json:"discountdescription"`
	BookingPrice        *bookingPriceJSON `json:"bookingprice,omitempty"`
}

// bookingPriceJSON is the stay's price as the plugin's cards print it: per night and in
// total, and the total before discounts (struck through when it differs), each a display
// text in the property's currency.
type bookingPriceJSON struct {
	GrandTotalValue                 string `json:"grandTotalValue"`
	GrandTotalPerNightValue         string `json:"grandTotalPerNightValue"`
	GrandTotalBeforeDiscountedValue string `json:"grandTotalBeforeDiscountedValue"`
}

func (a *API) summary(h hit, q *searchQuery, base string) searchProperty {
	r := h.r
	ct := r.p.Snap.Content
	f := r.fromPrice(q.now)
	cur := r.p.Pricing.Currency
	s := searchProperty{ID: r.idText, Name: ct.Name, Type: ct.Type, Brief: ct.Brief, Address: ct.Address, City: ct.City,
		Bedroom: strconv.Itoa(ct.Bedrooms), Bathroom: strconv.Itoa(ct.Bathrooms), MaxGuest: strconv.Itoa(ct.MaxGuest),
		IsFeatured: strconv.Itoa(flag(r.featured)), AllowPet: yesNo(ct.AllowPet), AllowSmoking: yesNo(ct.AllowSmoking),
		Latitude: ct.Latitude, Longitude: ct.Longitude, MinPrice: "0", Currency: cur,
		BaseName: ct.Name, RateLabel: rateLabelDay, RateToolTip: rateToolTip, DiscountTexts: []string{},
		DiscountDescription: []ordered[string]{}}
	if f.ok {
		s.MinPrice = json.Number(f.price.StringFixed(pricing.Scale(cur)))
		s.RateValue = moneyText(cur, f.price, pricing.Scale(cur))
	}
	if k := r.mainPhoto; k != "" {
		link := func(rendition string) string { return mediaLink(base, k, rendition) }
		s.ImagePath, s.ImageSmall, s.Image317x179, s.ImageH179, s.ImageW800 = link("original"), link("small"), link("317_179"),
			link("h_179"), link("w_800")
	}
	if h.st != nil && h.st.quote != nil {
		res := h.st.quote
		num := func(d decimal.Decimal) *json.Number { n := json.Number(d.StringFixed(res.Scale)); return &n }
		s.Checkin, s.Checkout, s.QtyOfNights = res.Checkin.String(), res.Checkout.String(), res.NightCount
		s.Nightly, s.TotalRent, s.GrandTotal = num(h.st.nightly), num(res.TotalRent), num(res.GrandTotal)
		s.Currency = res.Currency
		nights := decimal.NewFromInt(int64(max(res.NightCount, 1)))
		s.BookingPrice = &bookingPriceJSON{GrandTotalValue: moneyText(res.Currency, res.GrandTotal, res.Scale),
			GrandTotalPerNightValue:         moneyText(res.Currency, res.GrandTotal.DivRound(nights, res.Scale), res.Scale),
			GrandTotalBeforeDiscountedValue: moneyText(res.Currency, res.GrandTotal.Add(res.DiscountTotal), res.Scale)}
		for _, d := range res.Discounts {
			s.DiscountTexts = append(s.DiscountTexts, pricing.DiscountText(d, res.Currency, res.Scale))
		}
	} else if r.p.Pricing.Rates != nil {
		// Without dates: the property's length-of-stay tiers, as a stay long enough reads them.
		for _, l := range r.p.Pricing.Rates.LOS {
			s.DiscountTexts = append(s.DiscountTexts, pricing.DiscountText(pricing.Discount{Percent: l.Percent, Nights: l.Days}, cur, pricing.Scale(cur)))
		}
	}
	return s
}
