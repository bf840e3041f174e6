package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/booking-svc/internal/booking"
	"github.com/vros/vros/booking-svc/internal/guest"
	"github.com/vros/vros/libs/mongostore"
)

// Guest users are account data, not events: they are not published.

func emailID(account, email string) string { return account + ":" + strings.ToLower(email) }

type emailDoc struct {
	ID     string    `bson:"_id"`
	UserID int64     `bson:"user_id"`
	At     time.Time `bson:"at"`
}

// claimLease is how long a claim whose user does not hold the email is left to its claimer,
// still writing the user, before another user may take it over: longer than any request.
const claimLease = time.Minute

// AddUser stores a new user. Its email is claimed first (unique per account, any case), so
// two sign-ups with one email cannot both succeed.
func (s *Store) AddUser(ctx context.Context, account string, nu guest.User, social bool) (guest.User, error) {
	u := userRec(account, nu, social)
	id, err := s.userIDs.Next(ctx)
	if err != nil {
		return nu, err
	}
	if err := s.claimEmail(ctx, u.AccountID, u.Email, id); err != nil {
		return nu, err
	}
	u.UserID, u.ID = id, docID(u.AccountID, id)
	u.CreatedAt, u.UpdatedAt = s.now(), s.now()
	if _, err := s.users.InsertOne(ctx, u); err != nil {
		_, _ = s.emails.DeleteOne(context.WithoutCancel(ctx), bson.D{{Key: "_id", Value: emailID(u.AccountID, u.Email)}, {Key: "user_id", Value: id}})
		return nu, fmt.Errorf("insert user %d: %w", id, err)
	}
	return userOf(u), nil
}

// claimEmail reserves email for user id. A claim whose user does not exist or no longer
// holds the email (a crash between claim and write) is taken over once its lease has passed.
func (s *Store) claimEmail(ctx context.Context, account, email string, id int64) error {
	eid := emailID(account, email)
	_, err := s.emails.InsertOne(ctx, emailDoc{ID: eid, UserID: id, At: s.now()})
	if err == nil {
		return nil
	}
	if !mongostore.IsDuplicate(err) {
		return fmt.Errorf("claim email: %w", err)
	}
	var cur emailDoc
	if err := s.emails.FindOne(ctx, bson.D{{Key: "_id", Value: eid}}).Decode(&cur); err != nil {
		return fmt.Errorf("read email claim: %w", err)
	}
	// A claim whose user does not exist (yet) may be a claimer still writing it: taken
	// until its lease has passed, or two racing sign-ups would both take it.
	u, err := s.user(ctx, account, cur.UserID)
	if err != nil && !errors.Is(err, booking.ErrNotFound) {
		return err
	}
	if err == nil && strings.EqualFold(u.Email, email) || s.now().Before(cur.At.Add(claimLease)) {
		return booking.ErrEmailTaken
	}
	// Taken over on the claim as read, so that of two takers only one matches.
	took, err := mongostore.ReplaceIf(ctx, s.emails, eid, bson.D{{Key: "user_id", Value: cur.UserID}},
		emailDoc{ID: eid, UserID: id, At: s.now()})
	if err != nil {
		return fmt.Errorf("take over email claim: %w", err)
	}
	if !took {
		return booking.ErrEmailTaken
	}
	return nil
}

// User returns a user of account.
func (s *Store) User(ctx context.Context, account string, id int64) (guest.User, error) {
	u, err := s.user(ctx, account, id)
	return userOf(u), err
}

func (s *Store) user(ctx context.Context, account string, id int64) (UserRec, error) {
	var u UserRec
	err := s.users.FindOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}).Decode(&u)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return u, fmt.Errorf("user %d: %w", id, booking.ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("read user %d: %w", id, err)
	}
	return u, nil
}

// UserByEmail returns the user of account with email (any case).
func (s *Store) UserByEmail(ctx context.Context, account, email string) (guest.User, error) {
	var e emailDoc
	err := s.emails.FindOne(ctx, bson.D{{Key: "_id", Value: emailID(account, email)}}).Decode(&e)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return guest.User{}, fmt.Errorf("user by email: %w", booking.ErrNotFound)
	}
	if err != nil {
		return guest.User{}, fmt.Errorf("read email claim: %w", err)
	}
	return s.User(ctx, account, e.UserID)
}

// UpdateUser writes u over the stored user. A new email is claimed before the user changes
// and the old claim released after.
func (s *Store) UpdateUser(ctx context.Context, account string, u guest.User) (guest.User, error) {
	id := int64(u.UserID)
	old, err := s.user(ctx, account, id)
	if err != nil {
		return userOf(old), err
	}
	changed := !strings.EqualFold(u.Email, old.Email)
	if changed {
		if err := s.claimEmail(ctx, account, u.Email, id); err != nil {
			return userOf(old), err
		}
	}
	set := bson.D{{Key: "name", Value: u.Name}, {Key: "company", Value: u.Company}, {Key: "address", Value: u.Address},
		{Key: "country", Value: u.Country}, {Key: "phone1", Value: u.Phone1}, {Key: "phone2", Value: u.Phone2},
		{Key: "password_hash", Value: u.PasswordHash}, {Key: "email", Value: u.Email}, {Key: "updated_at", Value: s.now()}}
	var r UserRec
	unlock := s.locks.Lock(collUsers + "/" + docID(account, id))
	err = s.users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, bson.D{{Key: "$set", Value: set}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&r)
	unlock()
	if err != nil {
		return userOf(r), fmt.Errorf("update user %d: %w", id, err)
	}
	if changed {
		// Only its own claim: once this user no longer holds it, another may have taken it over.
		if _, err := s.emails.DeleteOne(ctx, bson.D{{Key: "_id", Value: emailID(account, old.Email)}, {Key: "user_id", Value: id}}); err != nil {
			return userOf(r), fmt.Errorf("release old email: %w", err)
		}
	}
	return userOf(r), nil
}
