package server

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// sessionsAPI serves the session RPCs: ListServers, CreateSession, GetSession, ListSessions (with the
// other replicas' sessions: peers.go) and DeleteSession. Service embeds it.
type sessionsAPI struct{ s *Service }

// sessionToProto describes a session.
func (a *sessionsAPI) sessionToProto(sess *mcpcore.Session) (*pb.Session, error) {
	st, reason := sess.State()
	info := sess.Info()
	caps, err := serverCapsToProto(info.Capabilities, sess.TasksCapability())
	if err != nil {
		return nil, err
	}
	pr, err := rootsToProto(sess.Roots())
	if err != nil {
		return nil, err
	}
	return &pb.Session{
		SessionId:          sess.ID(),
		Server:             sess.Server().Name,
		State:              stateToProto(st),
		StateReason:        reason,
		ProtocolVersion:    info.ProtocolVersion,
		ServerInfo:         implementationToProto(info.ServerInfo),
		ServerCapabilities: caps,
		Instructions:       info.Instructions,
		CreateTime:         timestamp(sess.Created()),
		HostCapabilities:   hostCapsToProto(sess.Capabilities()),
		Roots:              pr,
		Restarts:           uint32(max(sess.Restarts(), 0)),
	}, nil
}

// Page sizes of ListSessions.
const (
	defaultPageSize = 100
	maxPageSize     = 1000
)

// ListServers lists the configured servers the caller may use (mcpcore.Policy.AllowedOwners), without
// secrets (no command line, environment, URL or headers).
func (a *sessionsAPI) ListServers(ctx context.Context, _ *pb.ListServersRequest) (*pb.ListServersResponse, error) {
	s := a.s
	byName := map[string]mcpcore.ServerConfig{}
	for _, c := range s.core.Servers() {
		byName[c.Name] = c
	}
	out := &pb.ListServersResponse{}
	principal := Principal(ctx)
	add := func(name, description string) {
		c, ok := byName[name]
		if !ok || !c.Policy.AllowsOwner(principal) { // a server the caller may not use is not listed
			return
		}
		delete(byName, name)
		out.Servers = append(out.Servers, &pb.UpstreamServer{
			Name:            name,
			Transport:       transportToProto(c.Transport),
			Description:     description,
			ProtocolVersion: c.ProtocolVersion,
		})
	}
	for _, d := range s.serverDescriptions() {
		add(d.Name, d.Description)
	}
	for _, c := range s.core.Servers() { // sorted by name
		add(c.Name, "")
	}
	return out, nil
}

// CreateSession opens a session to a configured server for the caller and returns it once it is ready.
// Hosts name configured servers only: the API has no way to describe an ad-hoc server, whatever
// mcpcore.Options.AllowUnconfigured says.
func (a *sessionsAPI) CreateSession(ctx context.Context, req *pb.CreateSessionRequest) (resp *pb.CreateSessionResponse, err error) {
	s := a.s
	defer func() { s.auditCreate(ctx, req.GetServer(), resp, err) }()
	if req.GetServer() == "" {
		return nil, invalidArgument(required("server"))
	}
	var roots []*mcp.Root
	if len(req.GetRoots()) > 0 {
		r, err := rootsFromProto(req.GetRoots(), "roots")
		if err != nil {
			return nil, toStatus(err)
		}
		roots = r
	}
	var logLevel mcp.LoggingLevel
	if l := req.GetLogLevel(); l != pb.LoggingLevel_LOGGING_LEVEL_UNSPECIFIED {
		lvl, ok := logLevelFromProto(l)
		if !ok {
			return nil, invalidArgument(mcpcore.FieldViolation{Field: "log_level", Description: "unknown level"})
		}
		logLevel = lvl
	}
	if s.refusingNew() {
		return nil, toStatus(errShuttingDown)
	}
	if err := s.owner.CanOpen(); err != nil {
		return nil, toStatus(err) // a session that could not be kept would not survive this replica
	}
	sess, err := s.core.Open(ctx, mcpcore.OpenParams{
		Owner:           Principal(ctx),
		Server:          req.GetServer(),
		Capabilities:    hostCapsFromProto(req.GetHostCapabilities()),
		Roots:           roots,
		ProtocolVersion: req.GetProtocolVersion(),
		ClientInfo:      implementationFromProto(req.GetClientInfo()),
		LogLevel:        logLevel,
	})
	if err != nil {
		if errors.Is(err, mcpcore.ErrSessionClosed) {
			err = errShuttingDown // Open after Core.Close
		}
		return nil, toStatus(err)
	}
	s.logger.Info("session created", "session", sess.ID(), "server", req.GetServer(), "principal", Principal(ctx), "protocol", sess.Info().ProtocolVersion)
	ps, err := s.sessionToProto(sess)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CreateSessionResponse{Session: ps}, nil
}

// GetSession returns one of the caller's sessions.
func (a *sessionsAPI) GetSession(ctx context.Context, req *pb.GetSessionRequest) (*pb.GetSessionResponse, error) {
	s := a.s
	sess, err := s.lookup(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	ps, err := s.sessionToProto(sess)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.GetSessionResponse{Session: ps}, nil
}

// ListSessions lists the caller's sessions, newest first, in pages. The page token names the last session
// of the previous page (its creation time and id), so pages stay consistent while sessions come and go.
func (a *sessionsAPI) ListSessions(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	s := a.s
	if s.opts.Peers != nil && !localOnly(ctx) && req.GetPageSize() >= 0 {
		return s.listSessionsEverywhere(ctx, req) // peers.go
	}
	return s.listSessionsLocal(ctx, req)
}

// pageSize is the page size a ListSessions request asks for, within bounds (a negative one is refused by
// listSessionsLocal).
func pageSize(req *pb.ListSessionsRequest) int {
	size := int(req.GetPageSize())
	switch {
	case size == 0:
		size = defaultPageSize
	case size > maxPageSize:
		size = maxPageSize
	}
	return size
}

// listSessionsLocal lists the caller's sessions on this bridge.
func (a *sessionsAPI) listSessionsLocal(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	s := a.s
	if req.GetPageSize() < 0 {
		return nil, invalidArgument(mcpcore.FieldViolation{Field: "page_size", Description: "must not be negative"})
	}
	size := pageSize(req)
	var after *pageKey
	if tok := req.GetPageToken(); tok != "" {
		k, ok := decodePageToken(tok)
		if !ok {
			return nil, invalidArgument(mcpcore.FieldViolation{Field: "page_token", Description: "not a token returned by ListSessions"})
		}
		after = &k
	}
	all := s.core.Sessions(Principal(ctx))
	slices.Reverse(all) // newest first
	out := &pb.ListSessionsResponse{}
	for _, sess := range all {
		k := pageKey{created: sess.Created().UnixNano(), id: sess.ID()}
		if after != nil && k.compare(*after) >= 0 {
			continue // not older than the previous page's last session
		}
		if len(out.Sessions) == size {
			last := out.Sessions[len(out.Sessions)-1]
			out.NextPageToken = encodePageToken(pageKey{created: last.GetCreateTime().AsTime().UnixNano(), id: last.GetSessionId()})
			break
		}
		ps, err := s.sessionToProto(sess)
		if err != nil {
			return nil, toStatus(err)
		}
		out.Sessions = append(out.Sessions, ps)
	}
	return out, nil
}

// pageKey orders sessions by creation time, then id.
type pageKey struct {
	created int64
	id      string
}

func (k pageKey) compare(o pageKey) int {
	if c := cmp.Compare(k.created, o.created); c != 0 {
		return c
	}
	return cmp.Compare(k.id, o.id)
}

const pageTokenPrefix = "s1:"

func encodePageToken(k pageKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(pageTokenPrefix + strconv.FormatInt(k.created, 10) + ":" + k.id))
}

func decodePageToken(tok string) (pageKey, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return pageKey{}, false
	}
	rest, ok := strings.CutPrefix(string(raw), pageTokenPrefix)
	if !ok {
		return pageKey{}, false
	}
	ts, id, ok := strings.Cut(rest, ":")
	if !ok || id == "" {
		return pageKey{}, false
	}
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return pageKey{}, false
	}
	return pageKey{created: n, id: id}, true
}

// DeleteSession closes one of the caller's sessions and returns when it is closed: pending requests ended,
// in-flight calls cancelled, the stdio server process gone.
func (a *sessionsAPI) DeleteSession(ctx context.Context, req *pb.DeleteSessionRequest) (*pb.DeleteSessionResponse, error) {
	s := a.s
	sess, err := s.lookup(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	// A session that has already closed (supervision gave up, idle timeout) is kept for a while so that
	// its host can see why; deleting it succeeds and forgets it.
	if err := sess.CloseWithReason(ctx, deletedReason); err != nil {
		return nil, toStatus(err)
	}
	s.core.Forget(sess.ID())
	s.logger.Info("session deleted", "session", sess.ID(), "principal", Principal(ctx))
	s.audit(ctx, auditSessionDeleted, nil, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("state_reason", deletedReason))
	return &pb.DeleteSessionResponse{}, nil
}

// statusShuttingDown is the status of calls refused during shutdown.
func statusShuttingDown() error {
	return toStatus(errShuttingDown)
}
