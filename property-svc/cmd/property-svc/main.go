// Command property-svc serves property configuration (interface A).
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/libs/daemon"
	"github.com/vros/vros/property-svc/service"
)

func main() { daemon.Main("property-svc", service.Run) }
