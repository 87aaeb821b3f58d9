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
// never interleave.
type decisionLog struct {
	path string
	mu   sync.Mutex
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
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("create log directory: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open decision log: %w", err)
	}
	if _, err := f.Write(line); err != nil {
		f.Close()
		return fmt.Errorf("write decision log: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close decision log: %w", err)
	}
	return nil
}
