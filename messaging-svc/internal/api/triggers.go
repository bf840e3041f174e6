package api

import (
	"errors"
	"math"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/messaging-svc/internal/store"
	"github.com/vros/vros/messaging-svc/internal/trigger"
)

// message-trigger: each trigger on or off, a scheduled trigger's days and time of day.

type triggerAnswer struct {
	Trigger   string  `json:"trigger"`
	To        string  `json:"to"`
	Enabled   bool    `json:"enabled"`
	Days      *int    `json:"days"` // null for an event trigger
	Time      *string `json:"time"` // HH:MM; null for an event trigger
	Scheduled bool    `json:"scheduled"`
}

func triggersAnswer(s store.AccountSettings) fiber.Map {
	all := s.Triggers.All()
	out := make([]triggerAnswer, len(all))
	for i, e := range all {
		out[i] = triggerAnswer{Trigger: e.Name, To: string(e.To), Enabled: e.Enabled, Scheduled: e.Scheduled()}
		if e.Scheduled() {
			days, at := e.Days, e.At.String()
			out[i].Days, out[i].Time = &days, &at
		}
	}
	return fiber.Map{"triggers": out}
}

func triggerNames() []string {
	var out []string
	for _, d := range trigger.Catalog() {
		out = append(out, d.Name)
	}
	return out
}

func (a *API) triggerResource(c *fiber.Ctx) error {
	var v fields.Violations
	o, action := resourceBody(c, &v, "get", "update")
	ctx, acct := c.UserContext(), account(c)
	if action == "" {
		return v.Err()
	}
	if action != "update" {
		if err := v.Err(); err != nil {
			return err
		}
		s, err := a.d.Settings.Get(ctx, acct)
		if err != nil {
			return err
		}
		return httpapi.A(c, triggersAnswer(s))
	}
	items, _ := o.Array("triggers", fields.List{Required: true, Min: 1, Max: len(trigger.Catalog())})
	changes := make([]trigger.Change, 0, len(items))
	at := map[string]int{} // trigger → its index in changes
	paths := []string{}    // changes' JSON paths
	for _, it := range items {
		if it == nil {
			continue
		}
		var ch trigger.Change
		name, ok := it.String("trigger", fields.Str{Required: true, OneOf: triggerNames()})
		if !ok {
			continue
		}
		if _, twice := at[name]; twice {
			it.Add("trigger", name+" is given twice")
			continue
		}
		ch.Trigger = name
		if en, ok := it.Bool("enabled", false); ok {
			ch.Enabled = &en
		}
		if it.Has("days") {
			if d, ok := it.Int("days", fields.Int{Min: math.MinInt32, Max: math.MaxInt32}); ok {
				ch.Days = &d
			}
		}
		if it.Has("time") {
			if t, ok := it.String("time", fields.Str{Required: true, Max: 10}); ok {
				ch.At = &t
			}
		}
		at[name] = len(changes)
		changes = append(changes, ch)
		paths = append(paths, it.Path())
	}
	cur, err := a.d.Settings.Get(ctx, acct)
	if err != nil {
		return err
	}
	// The rules of each change (trigger.Settings.With), every refusal named by its path.
	for i, ch := range changes {
		_, err := cur.Triggers.With(ch)
		var fe *trigger.FieldError
		if errors.As(err, &fe) {
			member := "trigger"
			if _, part, ok := strings.Cut(fe.Field, ch.Trigger+"."); ok {
				member = part
			}
			v.Add(fields.Path(paths[i], member), fe.Rule)
		} else if err != nil {
			return err
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	next, err := cur.Triggers.With(changes...)
	if err != nil {
		return err
	}
	var saved store.AccountSettings
	err = a.write(ctx, acct, func() error {
		var err error
		saved, err = a.d.Settings.SetTriggers(ctx, acct, next, a.d.Now())
		return err
	})
	if err != nil {
		return err
	}
	if a.d.Replanner != nil {
		if err := a.d.Replanner.Replan(ctx, acct); err != nil {
			return httpapi.Unavailable("the trigger settings are saved, but the scheduled messages could not be re-planned: send the update again")
		}
	}
	return httpapi.A(c, triggersAnswer(saved))
}
