package account

import (
	"context"
	"time"
)

// Audit actions: one per kind of account or credential change.
const (
	ActionCreate    = "create"
	ActionRotate    = "rotate"
	ActionSuspend   = "suspend"
	ActionReinstate = "reinstate"
	ActionSettings  = "settings"
	ActionPlan      = "plan"
	// ActionDelete records that an account's deletion began; ActionDeleted, that it ended.
	ActionDelete  = "delete"
	ActionDeleted = "deleted"
	// ActionGuestErase records a guest's erasure in an account: the counts of records
	// anonymised, never who.
	ActionGuestErase = "guest_erase"
	// ActionIntegrations records a change of the account's integration settings in
	// integration-svc (allow_private_targets).
	ActionIntegrations = "integrations"
)

// AuditRecord is one account or credential change, appended to the audit log when the
// change is made. It never holds a secret, a secret's hash or a credential identifier: a
// rotation records only the kinds rotated.
type AuditRecord struct {
	// ID orders the log: records sort by it, oldest first (see NewAuditID).
	ID        string
	At        time.Time
	AccountID string
	Action    string
	// Changes are the fields changed, with their old and new values (create: the new ones).
	Changes []FieldChange
	// Credentials are the kinds a rotation (or the creation) issued.
	Credentials []Kind
	Actor
}

// FieldChange is one changed field of an account: its name as the admin API shows it, and
// the values before (nil at creation) and after.
type FieldChange struct {
	Field string
	Old   any
	New   any
}

// Actor is who made a change and from where: the admin caller's token fingerprint (never
// the token), the client address as edge sees it, and the request id.
type Actor struct {
	Fingerprint string
	Address     string
	RequestID   string
}

type actorKey struct{}

// WithActor returns ctx carrying a, whom the changes made with ctx are recorded as.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom is the Actor ctx carries; a change made without one (edge itself, tests) is
// recorded with an empty Actor.
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}

// AuditQuery selects audit records: those of AccountID (all when empty) older than the
// record After (a cursor: the ID of the last record of the previous page), newest first, at
// most Limit.
type AuditQuery struct {
	AccountID string
	After     string
	Limit     int64
}

// ListQuery selects accounts: Q matches the account id exactly or the name case-insensitively
// (as a substring); Status, when set, keeps the accounts of that status; After and Limit page
// in id order.
type ListQuery struct {
	Q      string
	Status Status
	After  string
	Limit  int64
}

// Change says that an account was written: its id, when, and its version (one more at every
// write), which is how replicas learn of changes made through the others (Service.Watch).
type Change struct {
	ID      string
	At      time.Time
	Version int64
}
