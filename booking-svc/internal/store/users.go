package store

import (
	"context"
	"errors"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/mongostore"
)

// Guest users are account data, not events: they are not published.

func emailID(account, email string) string { return account + ":" + strings.ToLower(email) }

type emailDoc struct {
	ID     string `bson:"_id"`
	UserID int64  `bson:"user_id"`
}

// AddUser stores a new user. Its email is claimed first (unique per account, any case), so
// two sign-ups with one email cannot both succeed.
func (s *Store) AddUser(ctx context.Context, u UserRec) (UserRec, error) {
	id, err := s.userIDs.Next(ctx)
	if err != nil {
		return u, err
	}
	if err := s.claimEmail(ctx, u.AccountID, u.Email, id); err != nil {
		return u, err
	}
	u.UserID, u.ID = id, docID(u.AccountID, id)
	u.CreatedAt, u.UpdatedAt = s.now(), s.now()
	if _, err := s.users.InsertOne(ctx, u); err != nil {
		return u, err
	}
	return u, nil
}

// claimEmail reserves email for user id. A claim whose user does not exist (a crash between
// claim and insert) is taken over.
func (s *Store) claimEmail(ctx context.Context, account, email string, id int64) error {
	eid := emailID(account, email)
	_, err := s.emails.InsertOne(ctx, emailDoc{ID: eid, UserID: id})
	if err == nil || !mongostore.IsDuplicate(err) {
		return err
	}
	var cur emailDoc
	if err := s.emails.FindOne(ctx, bson.D{{Key: "_id", Value: eid}}).Decode(&cur); err != nil {
		return err
	}
	if _, err := s.User(ctx, account, cur.UserID); !errors.Is(err, ErrNotFound) {
		if err == nil {
			return ErrEmailTaken
		}
		return err
	}
	_, err = s.emails.ReplaceOne(ctx, bson.D{{Key: "_id", Value: eid}}, emailDoc{ID: eid, UserID: id})
	return err
}

// User returns a user of account.
func (s *Store) User(ctx context.Context, account string, id int64) (UserRec, error) {
	var u UserRec
	err := s.users.FindOne(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}).Decode(&u)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return u, ErrNotFound
	}
	return u, err
}

// UserByEmail returns the user of account with email (any case).
func (s *Store) UserByEmail(ctx context.Context, account, email string) (UserRec, error) {
	var e emailDoc
	err := s.emails.FindOne(ctx, bson.D{{Key: "_id", Value: emailID(account, email)}}).Decode(&e)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return UserRec{}, ErrNotFound
	}
	if err != nil {
		return UserRec{}, err
	}
	return s.User(ctx, account, e.UserID)
}

// UpdateUser sets fields of a user. A new email is claimed before the user changes and the
// old claim released after.
func (s *Store) UpdateUser(ctx context.Context, account string, id int64, newEmail string, set bson.D) (UserRec, error) {
	old, err := s.User(ctx, account, id)
	if err != nil {
		return old, err
	}
	changed := newEmail != "" && !strings.EqualFold(newEmail, old.Email)
	if changed {
		if err := s.claimEmail(ctx, account, newEmail, id); err != nil {
			return old, err
		}
	}
	if newEmail != "" {
		set = append(set, bson.E{Key: "email", Value: newEmail})
	}
	set = append(set, bson.E{Key: "updated_at", Value: s.now()})
	var u UserRec
	unlock := s.locks.Lock(collUsers + "/" + docID(account, id))
	err = s.users.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: docID(account, id)}}, bson.D{{Key: "$set", Value: set}},
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&u)
	unlock()
	if err != nil {
		return u, err
	}
	if changed {
		_, err = s.emails.DeleteOne(ctx, bson.D{{Key: "_id", Value: emailID(account, old.Email)}})
	}
	return u, err
}
