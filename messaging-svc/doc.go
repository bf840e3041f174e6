// Package messagingsvc is vros's guest messaging service (docs/messaging.md): templates,
// triggers and schedules, delivery through a mail transport, each message exactly once. Its
// packages are under internal/.
package messagingsvc
