//go:build linux && arm64

package permission

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64
