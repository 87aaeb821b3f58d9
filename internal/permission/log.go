package permission

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// logEntry is one line of the decision log.
type logEntry struct {
	Time      string `json:"time"`
	Session   string `json:"session,omitempty"`
	Role      string `json:"role,omitempty"`
	Tool      string `json:"tool"`
	Subject   string `json:"subject,omitempty"`
	Decision  string `json:"decision"`
	By        string `json:"by"`
	Rule      string `json:"rule,omitempty"`
	Dangerous bool   `json:"dangerous,omitempty"`
}

// decisionLog appends JSONL entries. Each entry is one write on a file
// opened with O_APPEND, under a mutex, so lines from concurrent sessions
// and processes never interleave. The file is opened on the first entry
// and kept open: a decision costs one write, not an open and a close.
type decisionLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// close closes the file if it was opened.
func (l *decisionLog) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

func (l *decisionLog) append(e logEntry) error {
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode decision: %w", err)
	}
	line = append(line, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
			return fmt.Errorf("create log directory: %w", err)
		}
		f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("open decision log: %w", err)
		}
		l.f = f
	}
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("write decision log: %w", err)
	}
	return nil
}
