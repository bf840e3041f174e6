// Command booking-svc serves quotes, bookings, payments and guest users (interface B).
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/booking-svc/service"
	"github.com/vros/vros/libs/daemon"
)

func main() { daemon.Main("booking-svc", service.Run) }
