package egress

import (
	"net/netip"
	"testing"
)

func TestIsPublicAddr(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"8.8.8.8", true},
		{"151.101.1.69", true},
		{"2606:4700:4700::1111", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"127.0.0.1", false},
		{"127.8.9.10", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"255.255.255.255", false},
		{"::", false},
		{"::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fc00::1", false},
		{"fd00:ec2::254", false},
		{"ff02::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"64:ff9b::a00:1", false},   // NAT64 of 10.0.0.1
		{"2002:c0a8:101::1", false}, // 6to4 of 192.168.1.1
		{"2002:0808:0808::1", true}, // 6to4 of 8.8.8.8
	}
	for _, tc := range tests {
		if got := IsPublicAddr(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("IsPublicAddr(%s) = %v, want %v", tc.ip, got, tc.want)
		}
	}
}
