package main

import (
	"fmt"

	ecs "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"
)

// prefixRoundTrip runs an IP prefix's life on a second ENI, as Terway's prefix mode does: CreateNetworkInterface
// with Ipv4PrefixCount and Ipv6PrefixCount, AssignPrivateIpAddresses with Ipv4PrefixCount, AssignIpv6Addresses
// with Ipv6PrefixCount, DescribeNetworkInterfaces, the Unassign calls with Ipv4Prefix.N / Ipv6Prefix.N, and the
// ENI's deletion. Each answer goes into the report under a "prefix…" key.
func prefixRoundTrip(client *ecs.Client, opts options, report map[string]any) error {
	region := dara.String(opts.regionID)
	created, err := client.CreateNetworkInterface(&ecs.CreateNetworkInterfaceRequest{
		RegionId:         region,
		VSwitchId:        dara.String(opts.vSwitchID),
		SecurityGroupIds: []*string{dara.String(opts.securityGroupID)},
		Ipv4PrefixCount:  dara.Int32(1),
		Ipv6PrefixCount:  dara.Int32(1),
	})
	if err != nil {
		return fmt.Errorf("CreateNetworkInterface with prefixes: %w", err)
	}
	report["prefixCreate"] = created.Body
	eniID := created.Body.NetworkInterfaceId

	assignedV4, err := client.AssignPrivateIpAddresses(&ecs.AssignPrivateIpAddressesRequest{
		RegionId: region, NetworkInterfaceId: eniID, Ipv4PrefixCount: dara.Int32(2),
	})
	if err != nil {
		return fmt.Errorf("AssignPrivateIpAddresses with Ipv4PrefixCount: %w", err)
	}
	report["prefixAssignIpv4"] = assignedV4.Body

	assignedV6, err := client.AssignIpv6Addresses(&ecs.AssignIpv6AddressesRequest{
		RegionId: region, NetworkInterfaceId: eniID, Ipv6PrefixCount: dara.Int32(1),
	})
	if err != nil {
		return fmt.Errorf("AssignIpv6Addresses with Ipv6PrefixCount: %w", err)
	}
	report["prefixAssignIpv6"] = assignedV6.Body

	described, err := describeEni(client, opts, eniID)
	if err != nil {
		return err
	}
	report["prefixDescribe"] = described

	if _, err := client.UnassignPrivateIpAddresses(&ecs.UnassignPrivateIpAddressesRequest{
		RegionId:           region,
		NetworkInterfaceId: eniID,
		Ipv4Prefix:         assignedV4.Body.AssignedPrivateIpAddressesSet.Ipv4PrefixSet.Ipv4Prefixes,
	}); err != nil {
		return fmt.Errorf("UnassignPrivateIpAddresses with Ipv4Prefix.N: %w", err)
	}
	if _, err := client.UnassignIpv6Addresses(&ecs.UnassignIpv6AddressesRequest{
		RegionId:           region,
		NetworkInterfaceId: eniID,
		Ipv6Prefix:         assignedV6.Body.Ipv6PrefixSets.Ipv6Prefix,
	}); err != nil {
		return fmt.Errorf("UnassignIpv6Addresses with Ipv6Prefix.N: %w", err)
	}
	afterUnassign, err := describeEni(client, opts, eniID)
	if err != nil {
		return err
	}
	report["prefixDescribeAfterUnassign"] = afterUnassign

	if _, err := client.DeleteNetworkInterface(&ecs.DeleteNetworkInterfaceRequest{
		RegionId: region, NetworkInterfaceId: eniID,
	}); err != nil {
		return fmt.Errorf("DeleteNetworkInterface of the prefix ENI: %w", err)
	}
	_, err = waitForStatus(client, opts, eniID, "")
	return err
}
