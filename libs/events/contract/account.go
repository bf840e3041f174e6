package contract

import "time"

// AccountErased is published once an account has been erased (the operator deleted it): on
// vros.property.v1, keyed `<accountId>:account`. Every service forgets the account when it
// reads it and ignores the account's events that arrive later; the erasing service has also
// published a tombstone for every key the account had. The event holds only the account's id,
// so compaction keeps it for ever: a consumer that starts from the beginning learns of the
// erasure too.
const AccountErased = "vros.account.erased"

// AccountErasure is the data of AccountErased.
type AccountErasure struct {
	AccountID string    `json:"account_id"`
	ErasedAt  time.Time `json:"erased_at"`
}
