package service

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vros/vros/libs/config"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/telemetry/telemetrytest"
	"github.com/vros/vros/testkit/testinfra"
)

// Every edge of these tests shares one embedded MongoDB (edge's database name is fixed, so
// they always use their own server).
var mongoURI string

func TestMain(m *testing.M) {
	in, err := testinfra.Start(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "embedded:", err)
		os.Exit(1)
	}
	mongoURI = in.MongoURI
	code := m.Run()
	in.Close()
	os.Exit(code)
}

const adminToken = "test-admin-token-0123456789"

// testEdge is one edge started by serve, no services behind it (their routes answer 503
// once the caller is authenticated).
type testEdge struct {
	url  string
	logs *telemetrytest.Buffer
}

func start(t *testing.T, cfg Config) *testEdge {
	t.Helper()
	cfg.MongoURI = mongoURI
	cfg.InternalKeys.Edge = "test-hmac-key-0123456789"
	cfg.AdminToken = config.Secret(adminToken)
	cfg.Addr = "127.0.0.1:0"
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(context.Background(), "edge", "info")
	if err != nil {
		t.Fatal(err)
	}
	e := &testEdge{logs: &telemetrytest.Buffer{}}
	tel.Logger = slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	addr, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- serve(ctx, cfg, tel, func(a string) { addr <- a }) }()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case a := <-addr:
		e.url = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	return e
}

type answer struct {
	code      int
	body      []byte
	requestID string
}

func (e *testEdge) send(t *testing.T, method, path string, header map[string]string, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, body: b, requestID: resp.Header.Get("X-Request-Id")}
}

func (e *testEdge) admin(t *testing.T, method, path, body string, header ...string) answer {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + adminToken, "Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	return e.send(t, method, "/admin/v1"+path, h, body)
}

// raw sends request exactly as written and reads the answer.
func (e *testEdge) raw(t *testing.T, request string) answer {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = conn.Write([]byte(request)) // the server may answer before reading it all
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{code: resp.StatusCode, body: b, requestID: resp.Header.Get("X-Request-Id")}
}

// issued is what the admin API answers on creation and rotation.
type issued struct {
	AccountID     string `json:"account_id"`
	EdgeURL       string `json:"edge_url"`
	BasicUser     string `json:"basic_user"`
	BasicPassword string `json:"basic_password"`
	ServiceKey    string `json:"servicekey"`
	ServicePass   string `json:"servicepass"`
	Key           string `json:"key"`
	Pass          string `json:"pass"`
	OwnerToken    string `json:"owner_token"`
}

func decodeIssued(t *testing.T, a answer) issued {
	t.Helper()
	var out struct {
		Data issued `json:"data"`
	}
	if err := json.Unmarshal(a.body, &out); err != nil {
		t.Fatalf("decode %s: %v", a.body, err)
	}
	return out.Data
}

// aError decodes interface A's error envelope, asserting its code matches HTTP's.
func aError(t *testing.T, a answer) (errorType, message string) {
	t.Helper()
	var env struct {
		Code         int    `json:"code"`
		ErrorType    string `json:"error_type"`
		ErrorMessage string `json:"error_message"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil || env.Code != a.code || env.ErrorType == "" {
		t.Fatalf("want interface A's error envelope with code %d: %s", a.code, a.body)
	}
	return env.ErrorType, env.ErrorMessage
}

// bStatus decodes interface B's envelope.
func bStatus(t *testing.T, a answer) (status int, message string) {
	t.Helper()
	var env struct {
		Status  *int   `json:"status"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil || env.Status == nil {
		t.Fatalf("want interface B's envelope: %s", a.body)
	}
	return *env.Status, env.Message
}
