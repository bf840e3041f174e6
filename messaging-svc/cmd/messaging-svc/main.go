// Command messaging-svc is vros's guest messaging: the confirmation, change, cancellation,
// payment, deposit and stay messages of every booking, each sent exactly once, in the
// booking's language, through the account's mail server or the operator's
// (docs/messaging.md).
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/messaging-svc/service"
)

func main() { daemon.Main("messaging-svc", service.Run) }
