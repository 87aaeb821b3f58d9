package acp

import (
	"context"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// fileWait bounds one file request to the editor; past it the tool
// reads the disk (or the editor learns of the write from the disk).
const fileWait = 5 * time.Second

// ReadText asks the editor for its text of abs (its buffer, unsaved
// changes included) when the editor offers fs/read_text_file. It
// implements tools.Editor.
func (s *Server) ReadText(session, abs string) (string, bool) {
	conn, ctx, root, ok := s.fileAccess(session, abs, func(c sdk.FileSystemCapabilities) bool { return c.ReadTextFile })
	if !ok {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, fileWait)
	defer cancel()
	resp, err := conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(root), Path: abs})
	if err != nil {
		return "", false
	}
	return resp.Content, true
}

// Wrote hands a write that landed on disk to the editor when it offers
// fs/write_text_file, so the edit shows in its buffer at once. It
// implements tools.Editor.
func (s *Server) Wrote(session, abs, content string) {
	conn, ctx, root, ok := s.fileAccess(session, abs, func(c sdk.FileSystemCapabilities) bool { return c.WriteTextFile })
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, fileWait)
	defer cancel()
	_, _ = conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(root), Path: abs, Content: content})
}

// fileAccess finds the connection and the editor session for a file
// request from a tool of session, if the editor offers the capability and
// the file is in the workspace.
func (s *Server) fileAccess(session, abs string, offered func(sdk.FileSystemCapabilities) bool) (*sdk.AgentSideConnection, context.Context, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil || s.ctx == nil || s.ctx.Err() != nil || !offered(s.fs) {
		return nil, nil, "", false
	}
	root := session
	if r, ok := s.owner[session]; ok {
		root = r
	}
	if _, ok := s.sessions[root]; !ok {
		return nil, nil, "", false
	}
	if ws := s.host.Workspace(); abs != ws && !inside(ws, abs) {
		return nil, nil, "", false
	}
	return s.conn, s.ctx, root, true
}
