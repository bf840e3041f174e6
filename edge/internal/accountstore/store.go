// Package accountstore keeps accounts and their credentials in MongoDB (database
// vros_edge). Every lookup on the request path is by `_id`.
package accountstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/libs/mongostore"
)

const (
	collAccounts    = "accounts"
	collCredentials = "credentials"
	collCounters    = "counters"
	// collAudit is the audit log: append-only, but for an account's deletion, which blanks
	// the account's name in its records (FinishDeletion).
	collAudit = "audit"
	// firstAccountID keeps account ids at four digits or more.
	firstAccountID = 1000
)

// Store is the accounts repository.
type Store struct {
	accounts    *mongo.Collection
	credentials *mongo.Collection
	audit       *mongo.Collection
	ids         *mongostore.Sequence
	// locks serialize the writes to one account (see lock).
	locks *mongostore.DocLocks
}

// New returns a store over db, creating its collections and indexes (at start-up, never
// lazily: the embedded FerretDB can hang when two clients create one collection at once).
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	err := mongostore.Ensure(ctx, db, []string{collAccounts, collCredentials, collCounters, collAudit}, []mongostore.Index{
		// Every replica's poll for changes (ChangedSince).
		{Collection: collAccounts, Keys: bson.D{{Key: "changed_at", Value: 1}}},
		// One account's audit records, newest first.
		{Collection: collAudit, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "_id", Value: 1}}},
		// An account's credentials, deleted with it.
		{Collection: collCredentials, Keys: bson.D{{Key: "account_id", Value: 1}}},
		// The deletions left unfinished (Deleting).
		{Collection: collAccounts, Keys: bson.D{{Key: "status", Value: 1}, {Key: "deleting_at", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	return &Store{
		accounts:    db.Collection(collAccounts),
		credentials: db.Collection(collCredentials),
		audit:       db.Collection(collAudit),
		ids:         mongostore.NewSequence(db.Collection(collCounters), "account", 1),
		locks:       mongostore.NewDocLocks(),
	}, nil
}

type accountDoc struct {
	ID      string `bson:"_id"`
	Name    string `bson:"name"`
	Status  string `bson:"status"`
	Sandbox bool   `bson:"sandbox,omitempty"`
	// LegacyOff: absent (on) in every account stored before the setting existed.
	LegacyOff   bool              `bson:"legacy_credentials_off,omitempty"`
	CreatedAt   time.Time         `bson:"created_at"`
	UpdatedAt   time.Time         `bson:"updated_at"`
	Identifiers map[string]string `bson:"identifiers"`
	// TokenHash is the owner token's hash, so that rotation can delete its credential.
	TokenHash string `bson:"token_hash,omitempty"`
	// Plan: absent is the zero plan (edge's defaults).
	Plan *planDoc `bson:"plan,omitempty"`
	// ChangedAt and Version are stamped by every write: replicas poll for changes by
	// changed_at (ChangedSince) and tell one write from the next by version.
	ChangedAt time.Time `bson:"changed_at"`
	Version   int64     `bson:"version"`
	// DeletingAt: set when the deletion began; DeletedAt, when it ended.
	DeletingAt time.Time `bson:"deleting_at,omitempty"`
	DeletedAt  time.Time `bson:"deleted_at,omitempty"`
}

type planDoc struct {
	RateRPS       float64 `bson:"rate_rps"`
	RateBurst     int     `bson:"rate_burst"`
	MaxConcurrent int     `bson:"max_concurrent"`
	BodyLimit     int     `bson:"body_limit"`
	MaxProperties int     `bson:"max_properties"`
}

func toPlanDoc(p account.Plan) *planDoc {
	if p == (account.Plan{}) {
		return nil
	}
	d := planDoc(p)
	return &d
}

type credentialDoc struct {
	ID         string `bson:"_id"` // "<kind>:<identifier>"
	AccountID  string `bson:"account_id"`
	SecretHash string `bson:"secret_hash"`
}

func credentialID(kind account.Kind, identifier string) string {
	return string(kind) + ":" + identifier
}

// NextID allocates a new account id.
func (s *Store) NextID(ctx context.Context) (string, error) {
	n, err := s.ids.Next(ctx)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(firstAccountID+n, 10), nil
}

// Create stores a new account and its credentials. Credentials are written first: an
// account document never exists without a way to use it.
func (s *Store) Create(ctx context.Context, a account.Account, creds []account.Credential) error {
	if err := s.putCredentials(ctx, creds); err != nil {
		return err
	}
	doc := toDoc(a, creds)
	if _, err := s.accounts.InsertOne(ctx, doc); err != nil {
		return fmt.Errorf("insert account: %w", err)
	}
	return nil
}

func (s *Store) putCredentials(ctx context.Context, creds []account.Credential) error {
	for _, c := range creds {
		_, err := s.credentials.InsertOne(ctx, credentialDoc{ID: credentialID(c.Kind, c.Identifier), AccountID: c.AccountID, SecretHash: c.SecretHash})
		if err != nil {
			return fmt.Errorf("insert credential: %w", err)
		}
	}
	return nil
}

func toDoc(a account.Account, creds []account.Credential) accountDoc {
	doc := accountDoc{ID: a.ID, Name: a.Name, Status: string(a.Status), Sandbox: a.Sandbox, LegacyOff: a.LegacyOff, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
		Identifiers: map[string]string{}, Plan: toPlanDoc(a.Plan), ChangedAt: time.Now().UTC().Truncate(time.Millisecond), Version: 1}
	for k, v := range a.Identifiers {
		doc.Identifiers[string(k)] = v
	}
	for _, c := range creds {
		if c.Kind == account.OwnerToken {
			doc.TokenHash = c.Identifier
		} else {
			doc.Identifiers[string(c.Kind)] = c.Identifier
		}
	}
	return doc
}

// Get returns the account id.
func (s *Store) Get(ctx context.Context, id string) (account.Account, error) {
	d, err := s.get(ctx, id)
	if err != nil {
		return account.Account{}, err
	}
	return fromDoc(d), nil
}

func (s *Store) get(ctx context.Context, id string) (accountDoc, error) {
	var d accountDoc
	err := s.accounts.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return d, account.ErrNotFound
	}
	return d, err
}

func fromDoc(d accountDoc) account.Account {
	a := account.Account{ID: d.ID, Name: d.Name, Status: account.Status(d.Status), Sandbox: d.Sandbox, LegacyOff: d.LegacyOff, CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
		Identifiers: map[account.Kind]string{}, TokenHash: d.TokenHash, DeletingAt: d.DeletingAt, DeletedAt: d.DeletedAt}
	if d.Status == "revoked" { // stored before suspension had its name
		a.Status = account.Suspended
	}
	if d.Plan != nil {
		a.Plan = account.Plan(*d.Plan)
	}
	for k, v := range d.Identifiers {
		a.Identifiers[account.Kind(k)] = v
	}
	return a
}

// List returns the accounts q selects in id order, at most q.Limit after the id q.After.
func (s *Store) List(ctx context.Context, q account.ListQuery) ([]account.Account, error) {
	filter := bson.D{}
	if q.After != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After}}})
	}
	switch q.Status {
	case "":
		filter = append(filter, bson.E{Key: "status", Value: bson.D{{Key: "$ne", Value: string(account.Deleted)}}})
	case account.Suspended:
		filter = append(filter, bson.E{Key: "status", Value: bson.D{{Key: "$in", Value: bson.A{string(account.Suspended), "revoked"}}}})
	default:
		filter = append(filter, bson.E{Key: "status", Value: string(q.Status)})
	}
	if q.Q != "" {
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "_id", Value: q.Q}},
			bson.D{{Key: "name", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(q.Q)}, {Key: "$options", Value: "i"}}}},
		}})
	}
	cur, err := s.accounts.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(q.Limit))
	if err != nil {
		return nil, err
	}
	var docs []accountDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]account.Account, len(docs))
	for i, d := range docs {
		out[i] = fromDoc(d)
	}
	return out, nil
}

// Credential looks up a credential by kind and identifier.
func (s *Store) Credential(ctx context.Context, kind account.Kind, identifier string) (account.Credential, error) {
	var d credentialDoc
	err := s.credentials.FindOne(ctx, bson.D{{Key: "_id", Value: credentialID(kind, identifier)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return account.Credential{}, account.ErrNotFound
	}
	if err != nil {
		return account.Credential{}, err
	}
	return account.Credential{Kind: kind, Identifier: identifier, AccountID: d.AccountID, SecretHash: d.SecretHash}, nil
}

// Replace makes creds the account's credentials of their kinds. The new credentials are
// stored first and then listed in the account document by one update, which is the moment
// of the switch: authentication accepts only the credentials the account lists. The
// update returns the document as it was before, so exactly the credentials it unlisted are
// then deleted, whatever ran concurrently. A crash between the steps leaves credential
// documents that no account lists, which authenticate nobody.
func (s *Store) Replace(ctx context.Context, id string, creds []account.Credential) (account.Account, error) {
	unlock := s.lock(id)
	defer unlock()
	if err := s.putCredentials(ctx, creds); err != nil {
		return account.Account{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	set := bson.D{{Key: "updated_at", Value: now}, {Key: "changed_at", Value: now}}
	for _, c := range creds {
		if c.Kind == account.OwnerToken {
			set = append(set, bson.E{Key: "token_hash", Value: c.Identifier})
		} else {
			set = append(set, bson.E{Key: "identifiers." + string(c.Kind), Value: c.Identifier})
		}
	}
	var d accountDoc
	err := s.accounts.FindOneAndUpdate(ctx, live(id), bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}}},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		s.deleteCredentials(ctx, creds)
		return account.Account{}, s.whyNot(ctx, id)
	}
	if err != nil {
		return account.Account{}, err
	}
	if d.Identifiers == nil {
		d.Identifiers = map[string]string{}
	}
	var old []account.Credential
	for _, c := range creds {
		prev := d.Identifiers[string(c.Kind)]
		if c.Kind == account.OwnerToken {
			prev, d.TokenHash = d.TokenHash, c.Identifier
		} else {
			d.Identifiers[string(c.Kind)] = c.Identifier
		}
		if prev != "" && prev != c.Identifier {
			old = append(old, account.Credential{Kind: c.Kind, Identifier: prev})
		}
	}
	d.UpdatedAt = now
	// Unlisted, the old credentials already authenticate nobody: deleting them is
	// housekeeping, and its failure does not undo the rotation.
	s.deleteCredentials(ctx, old)
	return fromDoc(d), nil
}

func (s *Store) deleteCredentials(ctx context.Context, creds []account.Credential) {
	for _, c := range creds {
		_, _ = s.credentials.DeleteOne(ctx, bson.D{{Key: "_id", Value: credentialID(c.Kind, c.Identifier)}})
	}
}

// lock serializes the writes to one account made through this store (see
// mongostore.DocLocks: the embedded FerretDB could otherwise lose a status change to a
// concurrent rotation). Edge replicas sharing a FerretDB are not supported; `make run` runs one.
func (s *Store) lock(id string) (unlock func()) { return s.locks.Lock(id) }

// SetStatus changes an account's status.
func (s *Store) SetStatus(ctx context.Context, id string, st account.Status) (before, after account.Account, err error) {
	return s.set(ctx, id, bson.D{{Key: "status", Value: string(st)}}, func(d *accountDoc) { d.Status = string(st) })
}

// SetLegacy turns the account's legacy_credentials setting on or off.
func (s *Store) SetLegacy(ctx context.Context, id string, on bool) (before, after account.Account, err error) {
	return s.set(ctx, id, bson.D{{Key: "legacy_credentials_off", Value: !on}}, func(d *accountDoc) { d.LegacyOff = !on })
}

// SetPlan writes the fields of p that only names (all when nil), each as its own field of
// the stored plan: concurrent changes of different fields all hold.
func (s *Store) SetPlan(ctx context.Context, id string, p account.Plan, only []string) (before, after account.Account, err error) {
	var fields bson.D
	for _, f := range account.PlanFields(p) {
		if only == nil || slices.Contains(only, f.Field) {
			fields = append(fields, bson.E{Key: "plan." + f.Field, Value: f.New})
		}
	}
	return s.set(ctx, id, fields, func(doc *accountDoc) {
		cur := account.Plan{}
		if doc.Plan != nil {
			cur = account.Plan(*doc.Plan)
		}
		doc.Plan = toPlanDoc(account.MergePlan(cur, p, only))
	})
}

// set changes fields of an account (apply does the same to the document in memory),
// stamps updated_at, changed_at and a new version, and returns the account before and
// after.
func (s *Store) set(ctx context.Context, id string, fields bson.D, apply func(*accountDoc)) (before, after account.Account, err error) {
	unlock := s.lock(id)
	defer unlock()
	now := time.Now().UTC().Truncate(time.Millisecond)
	var d accountDoc
	err = s.accounts.FindOneAndUpdate(ctx, live(id),
		bson.D{
			{Key: "$set", Value: append(fields, bson.E{Key: "updated_at", Value: now}, bson.E{Key: "changed_at", Value: now})},
			{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
		},
		options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return account.Account{}, account.Account{}, s.whyNot(ctx, id)
	}
	if err != nil {
		return account.Account{}, account.Account{}, err
	}
	before = fromDoc(d)
	apply(&d)
	d.UpdatedAt, d.ChangedAt = now, now
	d.Version++
	return before, fromDoc(d), nil
}

type changeDoc struct {
	ID        string    `bson:"_id"`
	ChangedAt time.Time `bson:"changed_at"`
	Version   int64     `bson:"version"`
}

// ChangedSince lists the accounts written after since, oldest first: one query on the
// changed_at index, reading only ids, stamps and versions.
func (s *Store) ChangedSince(ctx context.Context, since time.Time) ([]account.Change, error) {
	cur, err := s.accounts.Find(ctx, bson.D{{Key: "changed_at", Value: bson.D{{Key: "$gt", Value: since}}}},
		options.Find().SetSort(bson.D{{Key: "changed_at", Value: 1}}).
			SetProjection(bson.D{{Key: "changed_at", Value: 1}, {Key: "version", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []changeDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]account.Change, len(docs))
	for i, d := range docs {
		out[i] = account.Change{ID: d.ID, At: d.ChangedAt, Version: d.Version}
	}
	return out, nil
}

type auditDoc struct {
	ID          string        `bson:"_id"`
	At          time.Time     `bson:"at"`
	AccountID   string        `bson:"account_id"`
	Action      string        `bson:"action"`
	Changes     []changeField `bson:"changes,omitempty"`
	Credentials []string      `bson:"credentials,omitempty"`
	Actor       string        `bson:"actor"`
	Address     string        `bson:"address"`
	RequestID   string        `bson:"request_id"`
}

type changeField struct {
	Field string `bson:"field"`
	Old   any    `bson:"old"`
	New   any    `bson:"new"`
}

// AppendAudit adds r to the audit log.
func (s *Store) AppendAudit(ctx context.Context, r account.AuditRecord) error {
	d := auditDoc{ID: r.ID, At: r.At, AccountID: r.AccountID, Action: r.Action, Actor: r.Fingerprint, Address: r.Address, RequestID: r.RequestID}
	for _, c := range r.Changes {
		d.Changes = append(d.Changes, changeField(c))
	}
	for _, k := range r.Credentials {
		d.Credentials = append(d.Credentials, string(k))
	}
	if _, err := s.audit.InsertOne(ctx, d); err != nil && !mongo.IsDuplicateKeyError(err) {
		// A duplicate is the record appended before under its id (a retried deletion's).
		return fmt.Errorf("insert audit record: %w", err)
	}
	return nil
}

// Audit reads the audit log newest first.
func (s *Store) Audit(ctx context.Context, q account.AuditQuery) ([]account.AuditRecord, error) {
	filter := bson.D{}
	if q.AccountID != "" {
		filter = append(filter, bson.E{Key: "account_id", Value: q.AccountID})
	}
	if q.After != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: q.After}}})
	}
	cur, err := s.audit.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(q.Limit))
	if err != nil {
		return nil, err
	}
	var docs []auditDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]account.AuditRecord, len(docs))
	for i, d := range docs {
		r := account.AuditRecord{ID: d.ID, At: d.At, AccountID: d.AccountID, Action: d.Action,
			Actor: account.Actor{Fingerprint: d.Actor, Address: d.Address, RequestID: d.RequestID}}
		for _, c := range d.Changes {
			r.Changes = append(r.Changes, account.FieldChange(c))
		}
		for _, k := range d.Credentials {
			r.Credentials = append(r.Credentials, account.Kind(k))
		}
		out[i] = r
	}
	return out, nil
}
