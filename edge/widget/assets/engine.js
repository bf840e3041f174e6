/* vros guest booking engine (docs/booking-engine.md). */
