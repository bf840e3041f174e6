// Package feed is the domain of iCal feed import: a feed an account registers for one of
// its properties, its poll status, the parsing of an iCal file into the nights its events
// hold, and the retry schedule of a failing feed (docs/ical.md, "Import").
package feed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	ics "github.com/arran4/golang-ical"
)

// Limits of the ical-feed resource.
const (
	MaxName         = 100
	MaxPerProperty  = 20
	DefaultInterval = 15
	MinInterval     = 5
	MaxInterval     = 1440
	// MaxEvents is the most events one sync sends to booking-svc (its own limit).
	MaxEvents = 5000
	// MaxNights is the most nights one event may hold (booking-svc's limit).
	MaxNights = 731
	// MaxUID bounds an event's UID (booking-svc's limit); a longer UID is sent as
	// "sha256:<hex of its SHA-256>".
	MaxUID = 255
	// MaxBackoff caps the wait after failed polls.
	MaxBackoff = 24 * time.Hour
)

// Feed is one registered iCal feed of a property.
type Feed struct {
	ID              string    `bson:"_id"` // "<account>:<feed_id>"
	AccountID       string    `bson:"account_id"`
	FeedID          int64     `bson:"feed_id"`
	PropertyID      int64     `bson:"property_id"`
	InternalCode    string    `bson:"internal_code"`
	URL             string    `bson:"url"`
	Name            string    `bson:"name"`
	IntervalMinutes int       `bson:"interval_minutes"`
	Enabled         bool      `bson:"enabled"`
	Status          Status    `bson:"status"`
	CreatedAt       time.Time `bson:"created_at"`
	UpdatedAt       time.Time `bson:"updated_at"`

	// Deleting: the feed was deleted; its blocks are being removed (the poller finishes
	// a removal a crash interrupted), then the document goes.
	Deleting bool `bson:"deleting"`
	// LeaseUntil and LeaseToken: the poll that holds the feed (one at a time).
	LeaseUntil time.Time `bson:"lease_until"`
	LeaseToken string    `bson:"lease_token"`
	// Seen are the current conflicts, each since the poll that first found it in this
	// occurrence, and whether its ical.conflict event was raised.
	Seen []SeenConflict `bson:"seen_conflicts"`
	// Reported are the keys of the conflicts raised, as written before Seen (read only:
	// taken as raised, since the zero time).
	Reported []string `bson:"reported,omitempty"`
}

// SeenConflict is a conflict as the poller has seen it: its key, the time it first appeared
// in this occurrence (a conflict that goes and comes back starts a new one), and whether
// its event was raised.
type SeenConflict struct {
	Key    string    `bson:"key"`
	Since  time.Time `bson:"since"`
	Raised bool      `bson:"raised"`
}

// SeenConflicts are the feed's Seen, or its Reported keys as raised when it was last
// written before Seen.
func (f *Feed) SeenConflicts() []SeenConflict {
	if f.Seen != nil || len(f.Reported) == 0 {
		return f.Seen
	}
	out := make([]SeenConflict, 0, len(f.Reported))
	for _, k := range f.Reported {
		out = append(out, SeenConflict{Key: k, Raised: true})
	}
	return out
}

// EventID is the webhook event id of a conflict's occurrence that began at since:
// ical_<hex of sha256(feed|key|since in ms)[:12]>, the key holding the uid, the dates and
// the sorted booking ids. Raising the same occurrence again (a retried poll) gives the
// same id; a conflict that comes back, or gets other bookings, gets a new one.
func (c SeenConflict) EventID(feedID int64) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d|%s|%d", feedID, c.Key, c.Since.UnixMilli()))
	return "ical_" + hex.EncodeToString(sum[:12])
}

// Status is what the last polls of a feed found.
type Status struct {
	LastPolledAt        *time.Time `bson:"last_polled_at"`
	LastSuccessAt       *time.Time `bson:"last_success_at"`
	LastError           string     `bson:"last_error"`
	LastErrorAt         *time.Time `bson:"last_error_at"`
	ConsecutiveFailures int        `bson:"consecutive_failures"`
	NextPollAt          time.Time  `bson:"next_poll_at"`
	EventsImported      int        `bson:"events_imported"`
	NightsBlocked       int        `bson:"nights_blocked"`
	// EventsSkipped counts the last file's unusable events (Calendar.Skipped).
	EventsSkipped int        `bson:"events_skipped"`
	Conflicts     []Conflict `bson:"conflicts"`
	// Note says what the last poll left to do without failing ("" when nothing): an
	// import booking-svc has not finished yet.
	Note string `bson:"note"`
}

// Conflict is a run of nights an event wants that vros bookings hold (EndDate: the last
// night, included, as booking-svc answers it).
type Conflict struct {
	UID        string  `bson:"uid" json:"uid"`
	StartDate  string  `bson:"start_date" json:"start_date"`
	EndDate    string  `bson:"end_date" json:"end_date"`
	BookingIDs []int64 `bson:"booking_ids" json:"booking_ids"`
}

// Key identifies a conflict: the same uid, dates and bookings are the same conflict.
func (c Conflict) Key() string {
	ids := slices.Clone(c.BookingIDs)
	slices.Sort(ids)
	return fmt.Sprintf("%s|%s|%s|%v", c.UID, c.StartDate, c.EndDate, ids)
}

// Backoff is the wait before the next poll after failures consecutive failed polls:
// interval × 2^(failures−1), at most MaxBackoff.
func Backoff(interval time.Duration, failures int) time.Duration {
	if failures < 1 {
		return interval
	}
	d := interval
	for i := 1; i < failures; i++ {
		d *= 2
		if d >= MaxBackoff {
			return MaxBackoff
		}
	}
	return min(d, MaxBackoff)
}

// Event is one event of a feed as booking-svc receives it: its UID and the nights
// Start..End-1 (End exclusive). Nothing else of the event is kept: a summary or a
// description may hold a guest's name.
type Event struct {
	UID   string `json:"uid"`
	Start string `json:"start"` // YYYY-MM-DD
	End   string `json:"end"`   // YYYY-MM-DD, exclusive
}

// ErrParse wraps every reason a file is not a usable iCal calendar.
var ErrParse = errors.New("not an iCal calendar")

var dateValue = regexp.MustCompile(`^(\d{8})(T\d{6}Z?)?$`)

// Calendar is what Parse keeps of an iCal file.
type Calendar struct {
	// Events are the current events (see Parse) with their dates as written: Window cuts
	// them to what a sync sends on a given day, so that a copy kept for later syncs (a 304
	// answer) is cut on that later day, not on the day of its parse.
	Events []Event
	// Skipped counts the VEVENTs left out as unusable: no UID, no or unreadable DTSTART,
	// dates past 9999-12-31.
	Skipped int
}

// Parse reads an iCal file into its current events: those not ended before today (UTC).
// Every VEVENT with a UID counts (a UID longer than MaxUID bytes is kept hashed); DTSTART and DTEND may be DATEs or DATE-TIMEs (a
// date-time's date is its date as written: in its own TZID zone, in UTC with a Z, or
// floating); DTEND is exclusive; a missing DTEND, or one not after DTSTART, holds one
// night. Cancelled events and events that ended before today are left out; events without
// UID, with no or an unreadable DTSTART, or with dates past 9999-12-31 too, and counted as
// skipped. A file that is not a VCALENDAR is an error, never an empty calendar.
func Parse(body []byte, today time.Time) (Calendar, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(body, []byte("\xef\xbb\xbf")))
	if !bytes.HasPrefix(bytes.ToUpper(trimmed[:min(len(trimmed), 15)]), []byte("BEGIN:VCALENDAR")) {
		return Calendar{}, fmt.Errorf("%w: the file does not begin with BEGIN:VCALENDAR", ErrParse)
	}
	// Properties between components are common in real files (a calendar name after the
	// events); the library refuses them unless told to keep them as calendar properties.
	cal, err := ics.ParseCalendarWithOptions(bytes.NewReader(trimmed), ics.WithUnknownPropertyHandler(ics.AcceptUnknownPropertyHandler))
	if err != nil {
		return Calendar{}, fmt.Errorf("%w: %v", ErrParse, err)
	}
	todayDate := dateOnly(today)
	var out Calendar
	seen := map[string]bool{}
	for _, ev := range cal.Events() {
		uid := strings.TrimSpace(ev.Id())
		if uid == "" {
			out.Skipped++
			continue
		}
		if len(uid) > MaxUID {
			sum := sha256.Sum256([]byte(uid))
			uid = "sha256:" + hex.EncodeToString(sum[:])
		}
		if seen[uid] {
			continue
		}
		if p := ev.GetProperty(ics.ComponentPropertyStatus); p != nil && strings.EqualFold(strings.TrimSpace(p.Value), "CANCELLED") {
			continue
		}
		start, ok := dateOf(ev.GetProperty(ics.ComponentPropertyDtStart))
		if !ok {
			out.Skipped++
			continue
		}
		end, ok := dateOf(ev.GetProperty(ics.ComponentPropertyDtEnd))
		if !ok || !end.After(start) {
			end = start.AddDate(0, 0, 1)
		}
		if end.Year() > 9999 {
			// Not a YYYY-MM-DD date: booking-svc would refuse the whole sync.
			out.Skipped++
			continue
		}
		if ended(end, todayDate) {
			continue
		}
		seen[uid] = true
		out.Events = append(out.Events, Event{UID: uid, Start: start.Format(time.DateOnly), End: end.Format(time.DateOnly)})
		if len(out.Events) > MaxEvents {
			return Calendar{}, fmt.Errorf("%w: more than %d current events", ErrParse, MaxEvents)
		}
	}
	return out, nil
}

// ended reports whether an event whose nights end before end (exclusive) is over on day
// today (UTC). It is judged a day late: when it is today in UTC it is still yesterday west
// of UTC, where an event ending today still holds tonight.
func ended(end, today time.Time) bool {
	return end.Before(today)
}

// Window is what a sync sends on day today (UTC) of events as Parse returns them: ended
// events left out (see ended), and an event longer than MaxNights nights cut to MaxNights
// from yesterday or its start, whichever is later, so that an event begun long ago keeps
// its coming nights. A shorter event keeps its dates as written (a running stay's block
// does not change every day).
func Window(events []Event, today time.Time) []Event {
	todayDate := dateOnly(today)
	yesterday := todayDate.AddDate(0, 0, -1)
	out := make([]Event, 0, len(events))
	for _, e := range events {
		start, err1 := time.Parse(time.DateOnly, e.Start)
		end, err2 := time.Parse(time.DateOnly, e.End)
		if err1 != nil || err2 != nil || !end.After(start) || ended(end, todayDate) {
			continue
		}
		if end.Sub(start) > MaxNights*24*time.Hour {
			if start.Before(yesterday) {
				start = yesterday
			}
			if limit := start.AddDate(0, 0, MaxNights); end.After(limit) {
				end = limit
			}
		}
		out = append(out, Event{UID: e.UID, Start: start.Format(time.DateOnly), End: end.Format(time.DateOnly)})
	}
	return out
}

func dateOnly(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

// dateOf is the date of a DTSTART or DTEND value.
func dateOf(p *ics.IANAProperty) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	m := dateValue.FindStringSubmatch(strings.TrimSpace(p.Value))
	if m == nil {
		return time.Time{}, false
	}
	d, err := time.Parse("20060102", m[1])
	return d, err == nil
}
