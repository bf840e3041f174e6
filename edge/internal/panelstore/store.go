// Package panelstore keeps the management panel's users, sessions and invites in MongoDB
// (database vros_edge). Sessions and invites are stored by their token's hash.
package panelstore

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/panelauth"
	"github.com/vros/vros/libs/mongostore"
)

const (
	collUsers    = "panel_users"
	collSessions = "panel_sessions"
	collInvites  = "panel_invites"
)

// Store is panelauth's Repository.
type Store struct {
	users, sessions, invites *mongo.Collection
}

// New returns the store over db, creating its collections and indexes at start-up.
func New(ctx context.Context, db *mongo.Database) (*Store, error) {
	err := mongostore.Ensure(ctx, db, []string{collUsers, collSessions, collInvites}, []mongostore.Index{
		// An account's users; sign-out everywhere.
		{Collection: collUsers, Keys: bson.D{{Key: "account_id", Value: 1}, {Key: "_id", Value: 1}}},
		{Collection: collSessions, Keys: bson.D{{Key: "email", Value: 1}}},
	})
	if err != nil {
		return nil, err
	}
	return &Store{users: db.Collection(collUsers), sessions: db.Collection(collSessions), invites: db.Collection(collInvites)}, nil
}

type userDoc struct {
	Email        string    `bson:"_id"`
	Name         string    `bson:"name"`
	Role         string    `bson:"role"`
	AccountID    string    `bson:"account_id"`
	PasswordHash []byte    `bson:"password_hash"`
	CreatedAt    time.Time `bson:"created_at"`
	InvitedBy    string    `bson:"invited_by,omitempty"`
}

type sessionDoc struct {
	ID        string    `bson:"_id"`
	Email     string    `bson:"email"`
	Name      string    `bson:"name"`
	Role      string    `bson:"role"`
	AccountID string    `bson:"account_id"`
	CSRF      string    `bson:"csrf"`
	CreatedAt time.Time `bson:"created_at"`
	ExpiresAt time.Time `bson:"expires_at"`
}

type inviteDoc struct {
	ID        string    `bson:"_id"`
	Email     string    `bson:"email"`
	Role      string    `bson:"role"`
	AccountID string    `bson:"account_id"`
	InvitedBy string    `bson:"invited_by"`
	CreatedAt time.Time `bson:"created_at"`
	ExpiresAt time.Time `bson:"expires_at"`
}

func byID(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// CreateUser stores u; its email is its _id, so two users of one email cannot both be stored.
func (s *Store) CreateUser(ctx context.Context, u panelauth.User) error {
	_, err := s.users.InsertOne(ctx, userDoc{Email: u.Email, Name: u.Name, Role: string(u.Role), AccountID: u.AccountID,
		PasswordHash: u.PasswordHash, CreatedAt: u.CreatedAt, InvitedBy: u.InvitedBy})
	if mongostore.IsDuplicate(err) {
		return panelauth.ErrEmailTaken
	}
	return err
}

func (d userDoc) user() panelauth.User {
	return panelauth.User{Email: d.Email, Name: d.Name, Role: panelauth.Role(d.Role), AccountID: d.AccountID,
		PasswordHash: d.PasswordHash, CreatedAt: d.CreatedAt, InvitedBy: d.InvitedBy}
}

// User reads the user of email.
func (s *Store) User(ctx context.Context, email string) (panelauth.User, error) {
	var d userDoc
	err := s.users.FindOne(ctx, byID(email)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return panelauth.User{}, panelauth.ErrNotFound
	}
	return d.user(), err
}

// Users lists the users of account ("": operators), by email.
func (s *Store) Users(ctx context.Context, account string) ([]panelauth.User, error) {
	cur, err := s.users.Find(ctx, bson.D{{Key: "account_id", Value: account}}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(1000))
	if err != nil {
		return nil, err
	}
	var docs []userDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]panelauth.User, len(docs))
	for i, d := range docs {
		out[i] = d.user()
	}
	return out, nil
}

// DeleteUser removes the user's sessions, then the user: a session never outlives its user.
func (s *Store) DeleteUser(ctx context.Context, email string) error {
	if _, err := s.DeleteSessions(ctx, email); err != nil {
		return err
	}
	_, err := s.users.DeleteOne(ctx, byID(email))
	return err
}

// CreateSession stores a new session.
func (s *Store) CreateSession(ctx context.Context, x panelauth.Session) error {
	_, err := s.sessions.InsertOne(ctx, sessionDoc{ID: x.ID, Email: x.Email, Name: x.Name, Role: string(x.Role), AccountID: x.AccountID,
		CSRF: x.CSRF, CreatedAt: x.CreatedAt, ExpiresAt: x.ExpiresAt})
	return err
}

// Session reads a session; ErrNoSession when there is none.
func (s *Store) Session(ctx context.Context, id string) (panelauth.Session, error) {
	var d sessionDoc
	err := s.sessions.FindOne(ctx, byID(id)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return panelauth.Session{}, panelauth.ErrNoSession
	}
	return panelauth.Session{ID: d.ID, Email: d.Email, Name: d.Name, Role: panelauth.Role(d.Role), AccountID: d.AccountID,
		CSRF: d.CSRF, CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}, err
}

// DeleteSession ends one session.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	_, err := s.sessions.DeleteOne(ctx, byID(id))
	return err
}

// DeleteSessions ends every session of email.
func (s *Store) DeleteSessions(ctx context.Context, email string) (int64, error) {
	r, err := s.sessions.DeleteMany(ctx, bson.D{{Key: "email", Value: email}})
	if err != nil {
		return 0, err
	}
	return r.DeletedCount, nil
}

// CreateInvite stores an invite.
func (s *Store) CreateInvite(ctx context.Context, i panelauth.Invite) error {
	_, err := s.invites.InsertOne(ctx, inviteDoc{ID: i.ID, Email: i.Email, Role: string(i.Role), AccountID: i.AccountID,
		InvitedBy: i.InvitedBy, CreatedAt: i.CreatedAt, ExpiresAt: i.ExpiresAt})
	return err
}

func (d inviteDoc) invite() panelauth.Invite {
	return panelauth.Invite{ID: d.ID, Email: d.Email, Role: panelauth.Role(d.Role), AccountID: d.AccountID, InvitedBy: d.InvitedBy,
		CreatedAt: d.CreatedAt, ExpiresAt: d.ExpiresAt}
}

// TakeInvite deletes the invite and returns it: of two takers only one gets it. The delete's
// count decides, not findAndModify: FerretDB on PostgreSQL let two concurrent
// findAndModify removes both return the document (seen in make test-real), while of two
// concurrent deletes of one document only one counts it.
func (s *Store) TakeInvite(ctx context.Context, id string) (panelauth.Invite, error) {
	inv, err := s.PeekInvite(ctx, id)
	if err != nil {
		return panelauth.Invite{}, err
	}
	r, err := s.invites.DeleteOne(ctx, byID(id))
	if err != nil {
		return panelauth.Invite{}, err
	}
	if r.DeletedCount != 1 {
		return panelauth.Invite{}, panelauth.ErrNoInvite
	}
	return inv, nil
}

// PeekInvite reads an invite.
func (s *Store) PeekInvite(ctx context.Context, id string) (panelauth.Invite, error) {
	var d inviteDoc
	err := s.invites.FindOne(ctx, byID(id)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return panelauth.Invite{}, panelauth.ErrNoInvite
	}
	return d.invite(), err
}
