// Command hostpath is a CSI driver for tests, in the manner of upstream's
// csi-driver-host-path: a volume is a directory under --data-dir on the
// one node the driver runs on. It serves the identity, controller and
// node services on --endpoint, stages a volume by bind-mounting its
// directory and publishes it by bind-mounting the staged one, serves
// inline ephemeral volumes, and answers the kubelet's plugin
// registration on a socket in --registration-dir, as node-driver-registrar
// does beside a real driver. It keeps no state beyond the directories.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	csipb "github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/orca-project/orca/internal/mountinfo"
)

type driver struct {
	csipb.UnimplementedIdentityServer
	csipb.UnimplementedControllerServer
	csipb.UnimplementedNodeServer
	name, nodeID, data string
	log                *slog.Logger
}

func main() {
	var endpoint, regDir, name string
	d := &driver{log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
	flag.StringVar(&endpoint, "endpoint", "", "unix socket to serve CSI on")
	flag.StringVar(&regDir, "registration-dir", "", "the kubelet's plugin registration directory (none: no registration)")
	flag.StringVar(&name, "name", "hostpath.csi.orca.test", "driver name")
	flag.StringVar(&d.nodeID, "node-id", "", "this node's ID")
	flag.StringVar(&d.data, "data-dir", "", "where volumes are kept")
	flag.Parse()
	d.name = name
	if err := run(d, endpoint, regDir); err != nil {
		fmt.Fprintln(os.Stderr, "hostpath:", err)
		os.Exit(1)
	}
}

func run(d *driver, endpoint, regDir string) error {
	if endpoint == "" || d.nodeID == "" || d.data == "" {
		return errors.New("--endpoint, --node-id and --data-dir are required")
	}
	if err := os.MkdirAll(d.data, 0o750); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	srv := grpc.NewServer()
	csipb.RegisterIdentityServer(srv, d)
	csipb.RegisterControllerServer(srv, d)
	csipb.RegisterNodeServer(srv, d)
	ln, err := listen(endpoint)
	if err != nil {
		return err
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	if regDir != "" {
		reg := grpc.NewServer()
		registerapi.RegisterRegistrationServer(reg, registrar{name: d.name, endpoint: endpoint, log: d.log})
		rl, err := listen(filepath.Join(regDir, d.name+"-reg.sock"))
		if err != nil {
			return err
		}
		go func() { _ = reg.Serve(rl) }()
		// The socket goes with the driver, which deregisters it.
		defer func() { reg.Stop(); _ = os.Remove(filepath.Join(regDir, d.name+"-reg.sock")) }()
	}
	d.log.Info("serving", "driver", d.name, "endpoint", endpoint)
	<-ctx.Done()
	return nil
}

func listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	_ = os.Remove(path)
	return net.Listen("unix", path)
}

type registrar struct {
	registerapi.UnimplementedRegistrationServer
	name, endpoint string
	log            *slog.Logger
}

func (r registrar) GetInfo(context.Context, *registerapi.InfoRequest) (*registerapi.PluginInfo, error) {
	return &registerapi.PluginInfo{Type: registerapi.CSIPlugin, Name: r.name, Endpoint: r.endpoint, SupportedVersions: []string{"1.0.0"}}, nil
}

func (r registrar) NotifyRegistrationStatus(_ context.Context, st *registerapi.RegistrationStatus) (*registerapi.RegistrationStatusResponse, error) {
	r.log.Info("registration status", "registered", st.PluginRegistered, "error", st.Error)
	return &registerapi.RegistrationStatusResponse{}, nil
}

// Identity.

func (d *driver) GetPluginInfo(context.Context, *csipb.GetPluginInfoRequest) (*csipb.GetPluginInfoResponse, error) {
	return &csipb.GetPluginInfoResponse{Name: d.name, VendorVersion: "test"}, nil
}

func (d *driver) GetPluginCapabilities(context.Context, *csipb.GetPluginCapabilitiesRequest) (*csipb.GetPluginCapabilitiesResponse, error) {
	return &csipb.GetPluginCapabilitiesResponse{Capabilities: []*csipb.PluginCapability{{
		Type: &csipb.PluginCapability_Service_{Service: &csipb.PluginCapability_Service{Type: csipb.PluginCapability_Service_CONTROLLER_SERVICE}},
	}}}, nil
}

func (d *driver) Probe(context.Context, *csipb.ProbeRequest) (*csipb.ProbeResponse, error) {
	return &csipb.ProbeResponse{}, nil
}

// Controller.

func (d *driver) ControllerGetCapabilities(context.Context, *csipb.ControllerGetCapabilitiesRequest) (*csipb.ControllerGetCapabilitiesResponse, error) {
	var caps []*csipb.ControllerServiceCapability
	for _, c := range []csipb.ControllerServiceCapability_RPC_Type{
		csipb.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME, csipb.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
	} {
		caps = append(caps, &csipb.ControllerServiceCapability{Type: &csipb.ControllerServiceCapability_Rpc{Rpc: &csipb.ControllerServiceCapability_RPC{Type: c}}})
	}
	return &csipb.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

func (d *driver) volumeDir(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, "/\x00") || id == "." || id == ".." {
		return "", status.Errorf(codes.InvalidArgument, "invalid volume ID %q", id)
	}
	return filepath.Join(d.data, id), nil
}

func (d *driver) CreateVolume(_ context.Context, req *csipb.CreateVolumeRequest) (*csipb.CreateVolumeResponse, error) {
	dir, err := d.volumeDir(req.Name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	d.log.Info("created volume", "id", req.Name)
	return &csipb.CreateVolumeResponse{Volume: &csipb.Volume{
		VolumeId: req.Name, CapacityBytes: req.GetCapacityRange().GetRequiredBytes(),
		VolumeContext: map[string]string{"made-by": "hostpath"},
	}}, nil
}

func (d *driver) DeleteVolume(_ context.Context, req *csipb.DeleteVolumeRequest) (*csipb.DeleteVolumeResponse, error) {
	dir, err := d.volumeDir(req.VolumeId)
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	d.log.Info("deleted volume", "id", req.VolumeId)
	return &csipb.DeleteVolumeResponse{}, nil
}

func (d *driver) ControllerPublishVolume(_ context.Context, req *csipb.ControllerPublishVolumeRequest) (*csipb.ControllerPublishVolumeResponse, error) {
	if req.NodeId != d.nodeID {
		return nil, status.Errorf(codes.NotFound, "node %q is not %q", req.NodeId, d.nodeID)
	}
	return &csipb.ControllerPublishVolumeResponse{PublishContext: map[string]string{"attached-to": req.NodeId}}, nil
}

func (d *driver) ControllerUnpublishVolume(context.Context, *csipb.ControllerUnpublishVolumeRequest) (*csipb.ControllerUnpublishVolumeResponse, error) {
	return &csipb.ControllerUnpublishVolumeResponse{}, nil
}

func (d *driver) ValidateVolumeCapabilities(_ context.Context, req *csipb.ValidateVolumeCapabilitiesRequest) (*csipb.ValidateVolumeCapabilitiesResponse, error) {
	return &csipb.ValidateVolumeCapabilitiesResponse{Confirmed: &csipb.ValidateVolumeCapabilitiesResponse_Confirmed{VolumeCapabilities: req.VolumeCapabilities}}, nil
}

// Node.

func (d *driver) NodeGetInfo(context.Context, *csipb.NodeGetInfoRequest) (*csipb.NodeGetInfoResponse, error) {
	return &csipb.NodeGetInfoResponse{NodeId: d.nodeID, MaxVolumesPerNode: 100,
		AccessibleTopology: &csipb.Topology{Segments: map[string]string{"topology.hostpath.csi.orca.test/node": d.nodeID}}}, nil
}

func (d *driver) NodeGetCapabilities(context.Context, *csipb.NodeGetCapabilitiesRequest) (*csipb.NodeGetCapabilitiesResponse, error) {
	return &csipb.NodeGetCapabilitiesResponse{Capabilities: []*csipb.NodeServiceCapability{{
		Type: &csipb.NodeServiceCapability_Rpc{Rpc: &csipb.NodeServiceCapability_RPC{Type: csipb.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME}},
	}}}, nil
}

func (d *driver) NodeStageVolume(_ context.Context, req *csipb.NodeStageVolumeRequest) (*csipb.NodeStageVolumeResponse, error) {
	dir, err := d.volumeDir(req.VolumeId)
	if err != nil {
		return nil, err
	}
	if req.PublishContext["attached-to"] != d.nodeID {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s was not attached here (publish context %v)", req.VolumeId, req.PublishContext)
	}
	if err := bind(dir, req.StagingTargetPath, false); err != nil {
		return nil, err
	}
	return &csipb.NodeStageVolumeResponse{}, nil
}

func (d *driver) NodeUnstageVolume(_ context.Context, req *csipb.NodeUnstageVolumeRequest) (*csipb.NodeUnstageVolumeResponse, error) {
	if err := unbind(req.StagingTargetPath); err != nil {
		return nil, err
	}
	return &csipb.NodeUnstageVolumeResponse{}, nil
}

func (d *driver) NodePublishVolume(_ context.Context, req *csipb.NodePublishVolumeRequest) (*csipb.NodePublishVolumeResponse, error) {
	src := req.StagingTargetPath
	if req.VolumeContext["csi.storage.k8s.io/ephemeral"] == "true" {
		dir, err := d.volumeDir(req.VolumeId)
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		// What the pod asked for in its volume attributes, for the test
		// to read back.
		if err := os.WriteFile(filepath.Join(dir, "attributes"), []byte(fmt.Sprint(req.VolumeContext["greeting"], " ", req.VolumeContext["csi.storage.k8s.io/pod.name"])), 0o644); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
		src = dir
	}
	if src == "" {
		return nil, status.Error(codes.FailedPrecondition, "volume was not staged")
	}
	if err := bind(src, req.TargetPath, req.Readonly); err != nil {
		return nil, err
	}
	return &csipb.NodePublishVolumeResponse{}, nil
}

func (d *driver) NodeUnpublishVolume(_ context.Context, req *csipb.NodeUnpublishVolumeRequest) (*csipb.NodeUnpublishVolumeResponse, error) {
	if err := unbind(req.TargetPath); err != nil {
		return nil, err
	}
	if strings.HasPrefix(req.VolumeId, "csi-") {
		// An inline volume lives as long as its pod.
		if dir, err := d.volumeDir(req.VolumeId); err == nil {
			_ = os.RemoveAll(dir)
		}
	}
	return &csipb.NodeUnpublishVolumeResponse{}, nil
}

func mounted(path string) bool {
	points, err := mountinfo.Self()
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	for _, p := range points {
		if p == real {
			return true
		}
	}
	return false
}

func bind(src, target string, readOnly bool) error {
	if err := os.MkdirAll(target, 0o750); err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	if mounted(target) {
		return nil
	}
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return status.Errorf(codes.Internal, "bind %s on %s: %v", src, target, err)
	}
	if readOnly {
		if err := unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			return status.Errorf(codes.Internal, "remount %s read-only: %v", target, err)
		}
	}
	return nil
}

func unbind(target string) error {
	if mounted(target) {
		if err := unix.Unmount(target, 0); err != nil {
			return status.Errorf(codes.Internal, "unmount %s: %v", target, err)
		}
	}
	if err := os.Remove(target); err != nil && !errors.Is(err, os.ErrNotExist) {
		return status.Error(codes.Internal, err.Error())
	}
	return nil
}
