package api

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/integration-svc/internal/channels/channel"
	"github.com/vros/vros/integration-svc/internal/ical/poller"
	"github.com/vros/vros/libs/fields"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy/tenancyfiber"
)

var mappingActions = []string{"create", "list", "get", "update", "delete", "sync"}

var (
	codeRule     = fields.Str{Required: true, Max: 10}
	remoteIDRule = fields.Str{Required: true, Max: MaxRemoteID}
	planIDRule   = fields.Int{Required: true, Min: 0, Max: 1 << 53}
)

func (a *API) mapping(c *fiber.Ctx) error {
	ctx := c.UserContext()
	account := tenancyfiber.From(c).AccountID
	var v fields.Violations
	o := fields.Parse(c.Body(), "", &v)
	action, _ := o.String("action", fields.Str{Required: true, OneOf: mappingActions})
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "create":
		return a.createMapping(c, ctx, account, o, &v)
	case "list":
		f := o.Object("mapping", false)
		conn, _ := f.Int("connection_id", fields.Int{Min: 1, Max: 1 << 53})
		prop, _ := f.Int("property_id", fields.Int{Min: 1, Max: 1 << 53})
		code, _ := f.String("internal_code", fields.Str{Max: 10})
		if err := v.Err(); err != nil {
			return err
		}
		list, err := a.Connections.Mappings(ctx, account, int64(conn), int64(prop))
		if err != nil {
			return err
		}
		out := make([]mappingJSON, 0, len(list))
		for _, m := range list {
			if code == "" || m.InternalCode == code {
				out = append(out, toMappingJSON(m))
			}
		}
		return httpapi.A(c, fiber.Map{"mappings": out})
	}
	f := o.Object("mapping", true)
	conn, prop, err := a.locate(ctx, account, f, &v)
	if err != nil {
		return err
	}
	if action == "update" {
		return a.updateMapping(c, ctx, account, f, conn, prop, &v)
	}
	if err := v.Err(); err != nil {
		return err
	}
	switch action {
	case "get":
		m, err := a.Connections.Mapping(ctx, account, conn, prop)
		if err != nil {
			return mappingNotFound(err, conn, prop)
		}
		return httpapi.A(c, toMappingJSON(m))
	case "delete":
		if err := a.Connections.DeleteMapping(ctx, account, conn, prop); err != nil {
			return mappingNotFound(err, conn, prop)
		}
		return httpapi.A(c, fiber.Map{"connection_id": conn, "property_id": prop, "deleted": true})
	}
	// sync
	m, err := a.Connections.Mapping(ctx, account, conn, prop)
	if err != nil {
		return mappingNotFound(err, conn, prop)
	}
	cn, err := a.Connections.Connection(ctx, account, conn)
	if err != nil {
		return connNotFound(err, conn)
	}
	switch {
	case !cn.Enabled:
		return httpapi.Conflict(httpapi.StatusConflict, "connection "+strconv.FormatInt(conn, 10)+" is disabled; enable it to sync")
	case !m.Enabled:
		return httpapi.Conflict(httpapi.StatusConflict, "the mapping of property "+strconv.FormatInt(prop, 10)+" is disabled; enable it to sync")
	case a.MarkDirty == nil:
		return httpapi.Unavailable(ErrNotSending.Error())
	}
	if err := a.MarkDirty(ctx, account, conn, prop, true); errors.Is(err, ErrNotSending) {
		return httpapi.Unavailable(err.Error())
	} else if err != nil {
		return err
	}
	return httpapi.A(c, toMappingJSON(m))
}

// locate reads the mapping's key: connection_id, and property_id or else internal_code
// (looked up among the connection's mappings: a mapping stays reachable by its code even
// when its property is gone).
func (a *API) locate(ctx context.Context, account string, f *fields.Object, v *fields.Violations) (conn, prop int64, err error) {
	n, _ := f.Int("connection_id", idRule)
	conn = int64(n)
	if f.Has("property_id") {
		p, _ := f.Int("property_id", idRule)
		return conn, int64(p), nil
	}
	if f == nil {
		return 0, 0, nil
	}
	if !f.Has("internal_code") {
		f.Add("internal_code", "is required (or property_id)")
		return 0, 0, nil
	}
	code, ok := f.String("internal_code", codeRule)
	if !ok || v.Len() > 0 {
		return 0, 0, nil
	}
	list, err := a.Connections.Mappings(ctx, account, conn, 0)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range list {
		if m.InternalCode == code {
			return conn, m.PropertyID, nil
		}
	}
	return 0, 0, httpapi.NotFound(httpapi.StatusNotFound, "property "+strconv.Quote(code)+" has no mapping on connection "+strconv.FormatInt(conn, 10))
}

// readPlans reads mapping.rate_plans: 1..MaxRatePlans, each vros plan and each remote id once.
func readPlans(f *fields.Object) ([]channel.PlanMapping, bool) {
	items, ok := f.Array("rate_plans", fields.List{Required: true, Min: 1, Max: MaxRatePlans})
	if !ok {
		return nil, false
	}
	out := make([]channel.PlanMapping, 0, len(items))
	seenPlan, seenRemote := map[int]bool{}, map[string]bool{}
	good := true
	for _, it := range items {
		if it == nil {
			good = false
			continue
		}
		plan, ok1 := it.Int("rate_plan_id", planIDRule)
		remote, ok2 := it.String("remote_rate_plan_id", remoteIDRule)
		if ok1 && seenPlan[plan] {
			it.Add("rate_plan_id", "is mapped twice; each vros rate plan once")
			ok1 = false
		}
		if ok2 && seenRemote[remote] {
			it.Add("remote_rate_plan_id", "is mapped twice; each remote rate plan once")
			ok2 = false
		}
		if !ok1 || !ok2 {
			good = false
			continue
		}
		seenPlan[plan], seenRemote[remote] = true, true
		out = append(out, channel.PlanMapping{RatePlanID: int64(plan), RemoteRatePlanID: remote})
	}
	return out, good
}

func (a *API) createMapping(c *fiber.Ctx, ctx context.Context, account string, o *fields.Object, v *fields.Violations) error {
	f := o.Object("mapping", true)
	n, _ := f.Int("connection_id", idRule)
	conn := int64(n)
	code, _ := f.String("internal_code", codeRule)
	remoteProp, _ := f.String("remote_property_id", remoteIDRule)
	room, _ := f.String("room_type_id", remoteIDRule)
	var plans []channel.PlanMapping
	if f != nil {
		plans, _ = readPlans(f)
	}
	enabled := true
	if b, ok := f.Bool("enabled", false); ok {
		enabled = b
	}
	if err := v.Err(); err != nil {
		return err
	}
	if _, err := a.Connections.Connection(ctx, account, conn); err != nil {
		return connNotFound(err, conn)
	}
	prop, err := a.property(ctx, account, code)
	if err != nil {
		return err
	}
	now := a.now()
	m := channel.Mapping{Account: account, ConnectionID: conn, PropertyID: prop, InternalCode: code, RemotePropertyID: remoteProp,
		RoomTypeID: room, RatePlans: plans, Enabled: enabled, CreatedAt: now, UpdatedAt: now}
	if err := a.Connections.AddMapping(ctx, m); err != nil {
		return a.mappingClash(ctx, err, m)
	}
	if enabled {
		if err := a.mark(ctx, account, conn, prop); err != nil {
			return err
		}
	}
	return httpapi.A(c, toMappingJSON(m))
}

// mappingClash answers a store's refusal of a mapping.
func (a *API) mappingClash(ctx context.Context, err error, m channel.Mapping) error {
	switch {
	case errors.Is(err, channel.ErrNotFound):
		return connNotFound(err, m.ConnectionID)
	case errors.Is(err, channel.ErrPropertyMapped):
		return httpapi.Conflict(httpapi.StatusConflict, "property "+strconv.Quote(m.InternalCode)+" is mapped on connection "+
			strconv.FormatInt(m.ConnectionID, 10)+" already")
	case errors.Is(err, channel.ErrRoomMapped):
		msg := "remote property " + strconv.Quote(m.RemotePropertyID) + " room type " + strconv.Quote(m.RoomTypeID) + " is mapped to another property"
		if other, err := a.Connections.MappingByRoom(ctx, m.Account, m.ConnectionID, m.RemotePropertyID, m.RoomTypeID); err == nil {
			msg += " (" + strconv.Quote(other.InternalCode) + ")"
		}
		return httpapi.Conflict(httpapi.StatusConflict, msg+" on this connection")
	}
	return err
}

func (a *API) updateMapping(c *fiber.Ctx, ctx context.Context, account string, f *fields.Object, conn, prop int64, v *fields.Violations) error {
	var remoteProp, room *string
	var plans []channel.PlanMapping
	var enabled *bool
	if f.Has("remote_property_id") {
		if s, ok := f.String("remote_property_id", remoteIDRule); ok {
			remoteProp = &s
		}
	}
	if f.Has("room_type_id") {
		if s, ok := f.String("room_type_id", remoteIDRule); ok {
			room = &s
		}
	}
	if f.Has("rate_plans") {
		plans, _ = readPlans(f)
	}
	if f.Has("enabled") {
		if b, ok := f.Bool("enabled", true); ok {
			enabled = &b
		}
	}
	for _, k := range f.Keys() {
		switch k {
		case "connection_id", "property_id", "internal_code", "remote_property_id", "room_type_id", "rate_plans", "enabled":
		default:
			f.Add(k, "cannot be changed; an update takes remote_property_id, room_type_id, rate_plans and enabled")
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	full := false
	var want channel.Mapping
	m, err := a.Connections.ModifyMapping(ctx, account, conn, prop, func(m *channel.Mapping) error {
		before := *m
		if remoteProp != nil {
			m.RemotePropertyID = *remoteProp
		}
		if room != nil {
			m.RoomTypeID = *room
		}
		if plans != nil {
			m.RatePlans = plans
		}
		if enabled != nil {
			m.Enabled = *enabled
		}
		m.UpdatedAt = a.now()
		full = m.Enabled && (!before.Enabled || m.RemotePropertyID != before.RemotePropertyID || m.RoomTypeID != before.RoomTypeID ||
			!slices.Equal(m.RatePlans, before.RatePlans))
		want = *m
		return nil
	})
	if err != nil {
		if errors.Is(err, channel.ErrNotFound) {
			return mappingNotFound(err, conn, prop)
		}
		return a.mappingClash(ctx, err, want)
	}
	if full {
		if err := a.mark(ctx, account, conn, prop); err != nil {
			return err
		}
	}
	return httpapi.A(c, toMappingJSON(m))
}

func (a *API) property(ctx context.Context, account, code string) (int64, error) {
	id, err := a.Properties.PropertyID(ctx, account, code)
	if errors.Is(err, poller.ErrNoProperty) {
		return 0, httpapi.NotFound(httpapi.StatusNoProperty, "property with internal_code "+strconv.Quote(code)+" does not exist")
	}
	if err != nil {
		return 0, httpapi.Unavailable("booking-svc is unavailable: " + strings.TrimPrefix(err.Error(), "booking-svc: "))
	}
	return id, nil
}

func mappingNotFound(err error, conn, prop int64) error {
	if errors.Is(err, channel.ErrNotFound) {
		return httpapi.NotFound(httpapi.StatusNotFound, "property "+strconv.FormatInt(prop, 10)+" has no mapping on connection "+strconv.FormatInt(conn, 10))
	}
	return err
}

type planJSON struct {
	RatePlanID       int64  `json:"rate_plan_id"`
	RemoteRatePlanID string `json:"remote_rate_plan_id"`
}

type mappingJSON struct {
	ConnectionID     int64      `json:"connection_id"`
	PropertyID       int64      `json:"property_id"`
	InternalCode     string     `json:"internal_code"`
	RemotePropertyID string     `json:"remote_property_id"`
	RoomTypeID       string     `json:"room_type_id"`
	RatePlans        []planJSON `json:"rate_plans"`
	Enabled          bool       `json:"enabled"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
}

func toMappingJSON(m channel.Mapping) mappingJSON {
	plans := make([]planJSON, len(m.RatePlans))
	for i, p := range m.RatePlans {
		plans[i] = planJSON(p)
	}
	return mappingJSON{ConnectionID: m.ConnectionID, PropertyID: m.PropertyID, InternalCode: m.InternalCode,
		RemotePropertyID: m.RemotePropertyID, RoomTypeID: m.RoomTypeID, RatePlans: plans, Enabled: m.Enabled,
		CreatedAt: m.CreatedAt.UTC().Truncate(time.Second), UpdatedAt: m.UpdatedAt.UTC().Truncate(time.Second)}
}
