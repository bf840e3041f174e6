// Command integration-svc is vros's integration surface: signed webhooks fed by the property
// and booking events, and the import of channels' iCal feeds into the booking ledger.
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/integration-svc/service"
	"github.com/vros/vros/libs/daemon"
)

func main() { daemon.Main("integration-svc", service.Run) }
