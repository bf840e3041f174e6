package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/statement"
	"github.com/vros/vros/libs/mongostore"
)

// Owner statements' store (docs/money.md, "Statements"). Each account's statements are kept
// in a collection of its own, "statements.<accountId>" (FerretDB pushes down only a lone
// `_id` equality, so nothing filters a shared collection across tenants): a statement's
// head (`_id` its id, "7-EUR-20270301-20270331") and each revision (`_id` "<id>/<n>",
// inserted once: a second writer of the same revision gets statement.ErrExists). The links
// owners are sent are in "statement_links", read by `_id` alone: the hex SHA-256 of the
// token (the token itself is never stored).

const (
	statementsPrefix   = "statements."
	collStatementLinks = "statement_links"
)

// Statements is statement.Store in the booking database.
type Statements struct {
	db    *mongo.Database
	links *mongo.Collection
	now   func() time.Time
	made  sync.Map
}

var _ statement.Store = (*Statements)(nil)

// NewStatements prepares db for statements.
func NewStatements(ctx context.Context, db *mongo.Database) (*Statements, error) {
	mongostore.PerKeyCollections(statementsPrefix)
	if err := mongostore.Ensure(ctx, db, []string{collStatementLinks}, nil); err != nil {
		return nil, fmt.Errorf("statement collections: %w", err)
	}
	return &Statements{db: db, links: db.Collection(collStatementLinks), now: func() time.Time { return time.Now().UTC() }}, nil
}

// statementDoc is a head (Kind "statement") or a revision (Kind "revision").
type statementDoc struct {
	ID          string    `bson:"_id"`
	Kind        string    `bson:"kind"`
	StatementID string    `bson:"statement_id"`
	OwnerID     int64     `bson:"owner_id"`
	Currency    string    `bson:"currency"`
	From        string    `bson:"from"`
	To          string    `bson:"to"`
	Revision    int       `bson:"revision"`
	EntryIDs    []string  `bson:"entry_ids,omitempty"`
	Opening     string    `bson:"opening,omitempty"`
	JSON        string    `bson:"json,omitempty"`
	CreatedAt   time.Time `bson:"created_at"`
	UpdatedAt   time.Time `bson:"updated_at,omitempty"`
}

func (s *Statements) coll(ctx context.Context, account string) (*mongo.Collection, error) {
	name := statementsPrefix + collectionSafe(account)
	if _, ok := s.made.Load(name); !ok {
		if err := mongostore.Ensure(ctx, s.db, []string{name}, nil); err != nil {
			return nil, fmt.Errorf("statements of %s: %w", account, err)
		}
		s.made.Store(name, true)
	}
	return s.db.Collection(name), nil
}

func headOf(d statementDoc) statement.Head {
	return statement.Head{StatementID: d.StatementID, OwnerID: d.OwnerID, Currency: d.Currency, From: d.From, To: d.To,
		Revision: d.Revision, CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC()}
}

// Head answers statement id of account.
func (s *Statements) Head(ctx context.Context, account, id string) (statement.Head, error) {
	c, err := s.coll(ctx, account)
	if err != nil {
		return statement.Head{}, err
	}
	var d statementDoc
	err = c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && d.Kind != "statement" {
		return statement.Head{}, fmt.Errorf("statement %s: %w", id, statement.ErrNotFound)
	}
	if err != nil {
		return statement.Head{}, fmt.Errorf("read statement %s: %w", id, err)
	}
	return headOf(d), nil
}

// Heads answers account's statements: a read of its own collection, without the revisions'
// JSON.
func (s *Statements) Heads(ctx context.Context, account string) ([]statement.Head, error) {
	c, err := s.coll(ctx, account)
	if err != nil {
		return nil, err
	}
	cur, err := c.Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "json", Value: 0}, {Key: "entry_ids", Value: 0}}))
	if err != nil {
		return nil, fmt.Errorf("statements of %s: %w", account, err)
	}
	defer cur.Close(ctx)
	var out []statement.Head
	for cur.Next(ctx) {
		var d statementDoc
		if err := cur.Decode(&d); err != nil {
			return nil, fmt.Errorf("statements of %s: %w", account, err)
		}
		if d.Kind == "statement" {
			out = append(out, headOf(d))
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("statements of %s: %w", account, err)
	}
	return out, nil
}

func revisionID(id string, n int) string { return id + "/" + strconv.Itoa(n) }

// Revision answers revision n of statement id.
func (s *Statements) Revision(ctx context.Context, account, id string, n int) (statement.Revision, error) {
	c, err := s.coll(ctx, account)
	if err != nil {
		return statement.Revision{}, err
	}
	var d statementDoc
	err = c.FindOne(ctx, bson.D{{Key: "_id", Value: revisionID(id, n)}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return statement.Revision{}, fmt.Errorf("statement %s revision %d: %w", id, n, statement.ErrNotFound)
	}
	if err != nil {
		return statement.Revision{}, fmt.Errorf("read statement %s revision %d: %w", id, n, err)
	}
	return statement.Revision{StatementID: d.StatementID, Revision: d.Revision, OwnerID: d.OwnerID, Currency: d.Currency,
		From: d.From, To: d.To, EntryIDs: d.EntryIDs, Opening: d.Opening, JSON: []byte(d.JSON), CreatedAt: d.CreatedAt.UTC()}, nil
}

// Insert stores revision r, then moves its statement's head to it. A crash between the two
// leaves the head behind, which the service's reads see past (they look for later revisions).
func (s *Statements) Insert(ctx context.Context, account string, r statement.Revision) error {
	c, err := s.coll(ctx, account)
	if err != nil {
		return err
	}
	d := statementDoc{ID: revisionID(r.StatementID, r.Revision), Kind: "revision", StatementID: r.StatementID, OwnerID: r.OwnerID,
		Currency: r.Currency, From: r.From, To: r.To, Revision: r.Revision, EntryIDs: r.EntryIDs, Opening: r.Opening,
		JSON: string(r.JSON), CreatedAt: r.CreatedAt.UTC()}
	if d.EntryIDs == nil {
		d.EntryIDs = []string{}
	}
	if _, err := c.InsertOne(ctx, d); err != nil {
		if mongo.IsDuplicateKeyError(err) {
			return fmt.Errorf("statement %s revision %d: %w", r.StatementID, r.Revision, statement.ErrExists)
		}
		return fmt.Errorf("insert statement %s revision %d: %w", r.StatementID, r.Revision, err)
	}
	now := s.now()
	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: r.StatementID}}, bson.D{
		{Key: "$set", Value: bson.D{{Key: "revision", Value: r.Revision}, {Key: "updated_at", Value: now}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "kind", Value: "statement"}, {Key: "statement_id", Value: r.StatementID},
			{Key: "owner_id", Value: r.OwnerID}, {Key: "currency", Value: r.Currency}, {Key: "from", Value: r.From},
			{Key: "to", Value: r.To}, {Key: "created_at", Value: r.CreatedAt.UTC()}}},
	}, options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("statement %s head: %w", r.StatementID, err)
	}
	return nil
}

type linkDoc struct {
	Hash        string    `bson:"_id"`
	AccountID   string    `bson:"account_id"`
	StatementID string    `bson:"statement_id"`
	CreatedAt   time.Time `bson:"created_at"`
	ExpiresAt   time.Time `bson:"expires_at"`
}

// PutLink stores a link.
func (s *Statements) PutLink(ctx context.Context, l statement.Link) error {
	if _, err := s.links.InsertOne(ctx, linkDoc{Hash: l.Hash, AccountID: l.AccountID, StatementID: l.StatementID,
		CreatedAt: l.CreatedAt.UTC(), ExpiresAt: l.ExpiresAt.UTC()}); err != nil {
		return fmt.Errorf("insert statement link: %w", err)
	}
	return nil
}

// Link answers the link of a token's hash.
func (s *Statements) Link(ctx context.Context, hash string) (statement.Link, error) {
	var d linkDoc
	err := s.links.FindOne(ctx, bson.D{{Key: "_id", Value: hash}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return statement.Link{}, fmt.Errorf("statement link: %w", statement.ErrNotFound)
	}
	if err != nil {
		return statement.Link{}, fmt.Errorf("read statement link: %w", err)
	}
	return statement.Link{Hash: d.Hash, AccountID: d.AccountID, StatementID: d.StatementID, CreatedAt: d.CreatedAt.UTC(),
		ExpiresAt: d.ExpiresAt.UTC()}, nil
}

// EraseAccount removes account's statements (account erasure). Its links stay until they
// expire, leading nowhere: a link answers its statement's latest revision, which is gone.
func (s *Statements) EraseAccount(ctx context.Context, account string) error {
	name := statementsPrefix + collectionSafe(account)
	if err := s.db.Collection(name).Drop(ctx); err != nil {
		return fmt.Errorf("erase account's statements: %w", err)
	}
	s.made.Delete(name)
	return nil
}
