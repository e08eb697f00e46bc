// Command ecs-sdk-conformance drives an ECS/VPC endpoint (the eniflow emulator) through Alibaba Cloud's official
// Go SDK and prints what the SDK parsed, as one JSON document on stdout, for test/emulator/go-sdk-conformance.test.ts.
//
// It runs the calls Terway's controller makes on an ENI's life: DescribeInstanceTypes, DescribeVSwitches,
// CreateNetworkInterface, AttachNetworkInterface, DescribeNetworkInterfaces, Assign/UnassignPrivateIpAddresses,
// DetachNetworkInterface and DeleteNetworkInterface, plus one call that must fail, to check error mapping; then an IP
// prefix round trip on a second ENI (prefixes.go).
// Any unexpected error ends the run with exit code 1 and the error on stderr.
//
// To move to another SDK release: `go get github.com/alibabacloud-go/ecs-20140526/v7@<version>` (and the same for
// vpc-20160428/v6), `go mod tidy`, then update ECS_GO_SDK_VERSION in scripts/lib/tools-config.ts. `npm run tools`
// rebuilds, because the cache key is a digest of this directory's sources.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	openapiutil "github.com/alibabacloud-go/darabonba-openapi/v2/utils"
	ecs "github.com/alibabacloud-go/ecs-20140526/v7/client"
	"github.com/alibabacloud-go/tea/dara"
	"github.com/alibabacloud-go/tea/tea"
	vpc "github.com/alibabacloud-go/vpc-20160428/v6/client"
)

type options struct {
	endpoint, accessKeyID, accessKeySecret, regionID     string
	vSwitchID, instanceID, securityGroupID, instanceType string
}

func main() {
	var opts options
	flag.StringVar(&opts.endpoint, "endpoint", "", "host:port of the ECS/VPC endpoint (plain HTTP)")
	flag.StringVar(&opts.accessKeyID, "access-key-id", "", "AccessKey id")
	flag.StringVar(&opts.accessKeySecret, "access-key-secret", "", "AccessKey secret")
	flag.StringVar(&opts.regionID, "region", "", "region id")
	flag.StringVar(&opts.vSwitchID, "vswitch", "", "vSwitch for the new ENI")
	flag.StringVar(&opts.instanceID, "instance", "", "instance to attach the ENI to (same zone as the vSwitch)")
	flag.StringVar(&opts.securityGroupID, "security-group", "", "security group of the new ENI")
	flag.StringVar(&opts.instanceType, "instance-type", "", "instance type to describe")
	flag.Parse()
	for name, value := range map[string]string{
		"endpoint": opts.endpoint, "access-key-id": opts.accessKeyID, "access-key-secret": opts.accessKeySecret,
		"region": opts.regionID, "vswitch": opts.vSwitchID, "instance": opts.instanceID,
		"security-group": opts.securityGroupID, "instance-type": opts.instanceType,
	} {
		if value == "" {
			fmt.Fprintf(os.Stderr, "ecs-sdk-conformance: -%s is required\n", name)
			os.Exit(2)
		}
	}
	report, err := run(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ecs-sdk-conformance: %v\n", err)
		os.Exit(1)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(report); err != nil {
		fmt.Fprintf(os.Stderr, "ecs-sdk-conformance: %v\n", err)
		os.Exit(1)
	}
}

func config(opts options) *openapiutil.Config {
	return &openapiutil.Config{
		AccessKeyId:     dara.String(opts.accessKeyID),
		AccessKeySecret: dara.String(opts.accessKeySecret),
		RegionId:        dara.String(opts.regionID),
		Endpoint:        dara.String(opts.endpoint),
		Protocol:        dara.String("http"),
		ReadTimeout:     dara.Int(5000),
		ConnectTimeout:  dara.Int(5000),
	}
}

func run(opts options) (map[string]any, error) {
	ecsClient, err := ecs.NewClient(config(opts))
	if err != nil {
		return nil, fmt.Errorf("ECS client: %w", err)
	}
	vpcClient, err := vpc.NewClient(config(opts))
	if err != nil {
		return nil, fmt.Errorf("VPC client: %w", err)
	}
	report := map[string]any{"sdk": sdkVersions()}
	region := dara.String(opts.regionID)

	types, err := ecsClient.DescribeInstanceTypes(&ecs.DescribeInstanceTypesRequest{
		InstanceTypes: []*string{dara.String(opts.instanceType)},
	})
	if err != nil {
		return nil, fmt.Errorf("DescribeInstanceTypes: %w", err)
	}
	report["describeInstanceTypes"] = types.Body

	vSwitchesBefore, err := vpcClient.DescribeVSwitches(&vpc.DescribeVSwitchesRequest{
		RegionId: region, VSwitchId: dara.String(opts.vSwitchID),
	})
	if err != nil {
		return nil, fmt.Errorf("DescribeVSwitches: %w", err)
	}
	report["describeVSwitchesBefore"] = vSwitchesBefore.Body

	created, err := ecsClient.CreateNetworkInterface(&ecs.CreateNetworkInterfaceRequest{
		RegionId:                       region,
		VSwitchId:                      dara.String(opts.vSwitchID),
		SecurityGroupIds:               []*string{dara.String(opts.securityGroupID)},
		SecondaryPrivateIpAddressCount: dara.Int32(1),
		Tag: []*ecs.CreateNetworkInterfaceRequestTag{
			{Key: dara.String("creator"), Value: dara.String("eniflow-go-sdk")},
		},
		ClientToken: dara.String(fmt.Sprintf("go-sdk-%d", time.Now().UnixNano())),
	})
	if err != nil {
		return nil, fmt.Errorf("CreateNetworkInterface: %w", err)
	}
	report["createNetworkInterface"] = created.Body
	eniID := created.Body.NetworkInterfaceId

	if _, err := ecsClient.AttachNetworkInterface(&ecs.AttachNetworkInterfaceRequest{
		RegionId: region, NetworkInterfaceId: eniID, InstanceId: dara.String(opts.instanceID),
	}); err != nil {
		return nil, fmt.Errorf("AttachNetworkInterface: %w", err)
	}
	attached, err := waitForStatus(ecsClient, opts, eniID, "InUse")
	if err != nil {
		return nil, err
	}
	report["describeNetworkInterfacesAttached"] = attached

	assigned, err := ecsClient.AssignPrivateIpAddresses(&ecs.AssignPrivateIpAddressesRequest{
		RegionId: region, NetworkInterfaceId: eniID, SecondaryPrivateIpAddressCount: dara.Int32(2),
	})
	if err != nil {
		return nil, fmt.Errorf("AssignPrivateIpAddresses: %w", err)
	}
	report["assignPrivateIpAddresses"] = assigned.Body
	addresses := assigned.Body.AssignedPrivateIpAddressesSet.PrivateIpSet.PrivateIpAddress

	if _, err := ecsClient.UnassignPrivateIpAddresses(&ecs.UnassignPrivateIpAddressesRequest{
		RegionId: region, NetworkInterfaceId: eniID, PrivateIpAddress: addresses,
	}); err != nil {
		return nil, fmt.Errorf("UnassignPrivateIpAddresses: %w", err)
	}
	// The same addresses again: gone now, so the API answers InvalidIp.IpUnassigned.
	_, err = ecsClient.UnassignPrivateIpAddresses(&ecs.UnassignPrivateIpAddressesRequest{
		RegionId: region, NetworkInterfaceId: eniID, PrivateIpAddress: addresses,
	})
	report["unassignAgainError"] = describeError(err)

	afterUnassign, err := describeEni(ecsClient, opts, eniID)
	if err != nil {
		return nil, err
	}
	report["describeNetworkInterfacesAfterUnassign"] = afterUnassign

	if _, err := ecsClient.DetachNetworkInterface(&ecs.DetachNetworkInterfaceRequest{
		RegionId: region, NetworkInterfaceId: eniID, InstanceId: dara.String(opts.instanceID),
	}); err != nil {
		return nil, fmt.Errorf("DetachNetworkInterface: %w", err)
	}
	if _, err := waitForStatus(ecsClient, opts, eniID, "Available"); err != nil {
		return nil, err
	}
	if _, err := ecsClient.DeleteNetworkInterface(&ecs.DeleteNetworkInterfaceRequest{
		RegionId: region, NetworkInterfaceId: eniID,
	}); err != nil {
		return nil, fmt.Errorf("DeleteNetworkInterface: %w", err)
	}
	if _, err := waitForStatus(ecsClient, opts, eniID, ""); err != nil {
		return nil, err
	}

	if err := prefixRoundTrip(ecsClient, opts, report); err != nil {
		return nil, err
	}

	vSwitchesAfter, err := vpcClient.DescribeVSwitches(&vpc.DescribeVSwitchesRequest{
		RegionId: region, VSwitchId: dara.String(opts.vSwitchID),
	})
	if err != nil {
		return nil, fmt.Errorf("DescribeVSwitches: %w", err)
	}
	report["describeVSwitchesAfter"] = vSwitchesAfter.Body
	return report, nil
}

func describeEni(client *ecs.Client, opts options, eniID *string) (*ecs.DescribeNetworkInterfacesResponseBody, error) {
	response, err := client.DescribeNetworkInterfaces(&ecs.DescribeNetworkInterfacesRequest{
		RegionId: dara.String(opts.regionID), NetworkInterfaceId: []*string{eniID},
	})
	if err != nil {
		return nil, fmt.Errorf("DescribeNetworkInterfaces: %w", err)
	}
	return response.Body, nil
}

// waitForStatus polls DescribeNetworkInterfaces until the ENI has `status`, or is gone when `status` is empty.
func waitForStatus(client *ecs.Client, opts options, eniID *string, status string) (*ecs.DescribeNetworkInterfacesResponseBody, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, err := describeEni(client, opts, eniID)
		if err != nil {
			return nil, err
		}
		enis := body.NetworkInterfaceSets.NetworkInterfaceSet
		if (status == "" && len(enis) == 0) || (len(enis) == 1 && dara.StringValue(enis[0].Status) == status) {
			return body, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("ENI %s did not reach status %q within 10 s", dara.StringValue(eniID), status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// describeError reports the code and HTTP status the SDK's error carries (a *tea.SDKError in this SDK line).
func describeError(err error) map[string]any {
	var sdkError *tea.SDKError
	if !errors.As(err, &sdkError) {
		return map[string]any{"error": fmt.Sprint(err), "type": fmt.Sprintf("%T", err)}
	}
	return map[string]any{
		"code":       tea.StringValue(sdkError.Code),
		"statusCode": tea.IntValue(sdkError.StatusCode),
		"type":       fmt.Sprintf("%T", err),
	}
}

// sdkVersions reports the SDK module versions compiled in, from go.sum via the build info.
func sdkVersions() map[string]string {
	versions := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versions
	}
	versions["go"] = info.GoVersion
	for _, dep := range info.Deps {
		if strings.HasPrefix(dep.Path, "github.com/alibabacloud-go/") {
			versions[strings.TrimPrefix(dep.Path, "github.com/alibabacloud-go/")] = dep.Version
		}
	}
	return versions
}
