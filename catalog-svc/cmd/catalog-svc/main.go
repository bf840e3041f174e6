// Command catalog-svc serves interface B's catalog reads (taxes, services, calendars, rate
// tables, galleries…) from views it keeps of the property and booking events.
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/catalog-svc/service"
	"github.com/vros/vros/libs/daemon"
)

func main() { daemon.Main("catalog-svc", service.Run) }
