package panel

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/edgemetrics"
	"github.com/vros/vros/edge/internal/gateway"
)

// countingCaller is a gateway that counts failed authentications.
type countingCaller struct{ kinds []edgemetrics.AuthKind }

func (c *countingCaller) Call(context.Context, account.Caller, gateway.Interface, string, []byte, string) (gateway.Answer, error) {
	return gateway.Answer{}, nil
}

func (c *countingCaller) AuthFailed(_ context.Context, kind edgemetrics.AuthKind) {
	c.kinds = append(c.kinds, kind)
}

// plainCaller is a gateway that counts nothing.
type plainCaller struct{}

func (plainCaller) Call(context.Context, account.Caller, gateway.Interface, string, []byte, string) (gateway.Answer, error) {
	return gateway.Answer{}, nil
}

// TestSignInFailureCounted: a refused sign-in is counted as a failed authentication of kind
// panel by a gateway that counts them (edge's), and is harmless with one that does not.
func TestSignInFailureCounted(t *testing.T) {
	counting := &countingCaller{}
	app := fiber.New()
	app.Post("/a", func(c *fiber.Ctx) error { signInFailed(c, counting); return nil })
	app.Post("/b", func(c *fiber.Ctx) error { signInFailed(c, plainCaller{}); return nil })
	for _, path := range []string{"/a", "/b"} {
		if _, err := app.Test(httptest.NewRequest("POST", path, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if len(counting.kinds) != 1 || counting.kinds[0] != edgemetrics.Panel {
		t.Fatalf("counted %v, want [panel]", counting.kinds)
	}
}
