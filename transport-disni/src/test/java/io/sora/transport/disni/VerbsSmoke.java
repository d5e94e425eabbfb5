package io.sora.transport.disni;

import com.ibm.disni.util.NativeAffinity;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.impl.RdmaVerbsNat;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * End-to-end check of sora's libdisni through DiSNI's verbs layer, client and server in one JVM
 * over a real RDMA device (Soft-RoCE rxe0 in the test VM): CM set-up with bounded waits, SEND/RECV,
 * RDMA WRITE WITH IMMEDIATE into the peer's buffer, RDMA READ, completion events, disconnect and
 * ordered teardown; every payload is compared byte for byte.
 *
 * <p>Usage: {@code VerbsSmoke [ip [port]]} (defaults: {@code $RXE_IP} or 192.168.77.1, 17471);
 * prints one line per check and exits 0 only if all passed.
 */
public final class VerbsSmoke {

    static final int DEFAULT_PORT = 17471;
    static final int STEP_TIMEOUT_MS = 30_000;
    static final int IMM = 0x50A2A001;
    static final int BULK = 4096;
    static final int READ_CHUNKS = 32;

    private final InetSocketAddress address;
    private final PrintStream log;
    private final List<String> passed = new ArrayList<>();

    private VerbsSmoke(InetSocketAddress address, PrintStream log) {
        this.address = address;
        this.log = log;
    }

    public static void main(String[] args) {
        try {
            String ip = args.length > 0 ? args[0] : System.getenv().getOrDefault("RXE_IP", "192.168.77.1");
            int port = args.length > 1 ? Integer.parseInt(args[1]) : DEFAULT_PORT;
            System.out.println("jvm: " + Runtime.version() + " " + ManagementFactory.getRuntimeMXBean()
                    .getInputArguments().stream().filter(a -> a.startsWith("-X") || a.startsWith("--")).toList());
            List<String> checks = run(new InetSocketAddress(InetAddress.getByName(ip), port), System.out);
            System.out.println("VERBS SMOKE PASSED (" + checks.size() + " checks)");
        } catch (IOException | RuntimeException | AssertionError e) {
            e.printStackTrace();
            System.out.println("VERBS SMOKE FAILED: " + e);
            System.exit(1);
        }
    }

    /**
     * Runs the whole scenario against a listener bound to {@code address}.
     *
     * @return the names of the checks that passed, in order
     * @throws IOException or AssertionError on the first failed step, naming it
     */
    static List<String> run(InetSocketAddress address, PrintStream log) throws IOException {
        return new VerbsSmoke(address, log).scenario();
    }

    private List<String> scenario() throws IOException {
        RdmaEventChannel serverCh = RdmaEventChannel.createEventChannel();
        RdmaCmId listenId = serverCh.createId(RdmaCm.RDMA_PS_TCP);
        listenId.bindAddr(address);
        listenId.listen(4);
        pass("server bound and listening on " + address);

        RdmaEventChannel clientCh = RdmaEventChannel.createEventChannel();
        RdmaCmId clientId = clientCh.createId(RdmaCm.RDMA_PS_TCP);
        clientId.resolveAddr(null, address, 5000);
        await(clientCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED);
        clientId.resolveRoute(5000);
        await(clientCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED);
        pass("client resolved address and route");

        VerbsPeer client = new VerbsPeer("client", clientId);
        ByteBuffer cSend = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer cRecv = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer cTarget = ByteBuffer.allocateDirect(BULK);
        ByteBuffer cRead = ByteBuffer.allocateDirect(BULK);
        IbvMr cSendMr = client.register(cSend);
        IbvMr cRecvMr = client.register(cRecv);
        IbvMr cTargetMr = client.register(cTarget);
        IbvMr cReadMr = client.register(cRead);
        client.postRecv(cRecvMr, 100); // for the server's reply SEND
        client.postRecv(cRecvMr, 101); // consumed by the WRITE WITH IMMEDIATE
        checkContext(client);

        RdmaConnParam param = new RdmaConnParam();
        param.setRetry_count((byte) 7);
        param.setRnr_retry_count((byte) 7);
        clientId.connect(param);
        RdmaCmEvent request = await(serverCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST);
        RdmaCmId connId = request.getConnIdPriv();
        check(request.getListenIdPriv() == listenId, "CONNECT_REQUEST names the listening id");
        VerbsPeer server = new VerbsPeer("server", connId);
        ByteBuffer sRecv = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer sSend = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer sBulk = ByteBuffer.allocateDirect(BULK);
        ByteBuffer sReadable = ByteBuffer.allocateDirect(BULK);
        IbvMr sRecvMr = server.register(sRecv);
        IbvMr sSendMr = server.register(sSend);
        IbvMr sBulkMr = server.register(sBulk);
        IbvMr sReadableMr = server.register(sReadable);
        server.postRecv(sRecvMr, 200);
        connId.accept(param);
        await(clientCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED);
        await(serverCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED);
        pass("connected: client qp " + client.qp.getQp_num() + " <-> server qp " + server.qp.getQp_num());
        checkAddresses(clientId, connId);

        exchange(client, server, new Buffers(cSend, cSendMr, cRecv, cTarget, cTargetMr, cRead, cReadMr),
                new Buffers(sSend, sSendMr, sRecv, sBulk, sBulkMr, sReadable, sReadableMr));

        // IB CM: the client's DREQ raises DISCONNECTED at the server, whose own disconnect sends
        // the DREP that completes the client's
        check(clientId.disconnect() == 0, "client disconnect returns 0");
        await(serverCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED);
        check(connId.disconnect() == 0, "server disconnect returns 0");
        await(clientCh, RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED);
        pass("disconnected on both sides");

        client.destroy();
        server.destroy();
        check(connId.destroyId() == 0, "destroy server connection id");
        check(clientId.destroyId() == 0, "destroy client id");
        check(listenId.destroyId() == 0, "destroy listening id");
        RdmaCmId spare = clientCh.createId(RdmaCm.RDMA_PS_TCP);
        check(spare.destroyEp() == 0, "rdma_destroy_ep on an unused id");
        check(clientCh.destroyEventChannel() == 0, "destroy client event channel");
        check(serverCh.destroyEventChannel() == 0, "destroy server event channel");
        pass("destroyed QPs, CQs, channels, MRs, PDs, ids and event channels in order");
        checkAffinity();
        return passed;
    }

    /** The registered buffers of one side. */
    private record Buffers(ByteBuffer send, IbvMr sendMr, ByteBuffer recv, ByteBuffer bulk, IbvMr bulkMr,
                           ByteBuffer extra, IbvMr extraMr) {
    }

    private void exchange(VerbsPeer client, VerbsPeer server, Buffers c, Buffers s) throws IOException {
        long deadline = deadline();
        // 1. client SENDs a greeting plus where the server may write (addr, rkey, length)
        byte[] hello = "hello from the sora client".getBytes(StandardCharsets.US_ASCII);
        c.send().put(0, (byte) hello.length).put(1, hello).putLong(32, c.bulkMr().getAddr())
                .putInt(40, c.bulkMr().getRkey()).putInt(44, BULK);
        client.postSend(List.of(VerbsPeer.sendWr(1, IbvSendWR.IBV_WR_SEND, c.sendMr(), 48)));
        IbvWC recv = server.pollFor(1, deadline).get(0);
        check(recv.getWr_id() == 200 && recv.getOpcode() == IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode()
                && recv.getByte_len() == 48, "server RECV completion (wr_id 200, 48 bytes): " + describe(recv));
        checkSame(c.send(), s.recv(), 48, "SEND payload");
        IbvWC sent = client.pollFor(1, deadline).get(0);
        check(sent.getWr_id() == 1 && sent.getOpcode() == IbvWC.IbvWcOpcode.IBV_WC_SEND.getOpcode(),
                "client SEND completion: " + describe(sent));
        pass("SEND/RECV of 48 bytes, byte for byte");

        // 2. server: WRITE WITH IMMEDIATE into the client's buffer + a reply SEND, in one post
        long remoteAddr = s.recv().getLong(32);
        int remoteKey = s.recv().getInt(40);
        fill(s.bulk(), 31, 7);
        fill(s.extra(), 17, 3);
        s.send().putLong(0, s.extraMr().getAddr()).putInt(8, s.extraMr().getRkey()).putInt(12, BULK);
        IbvSendWR write = VerbsPeer.sendWr(10, IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, s.bulkMr(), BULK);
        write.setImm_data(IMM);
        write.getRdma().setRemote_addr(remoteAddr);
        write.getRdma().setRkey(remoteKey);
        client.arm(); // before the server posts, so the completions must come through an event
        server.postSend(List.of(write, VerbsPeer.sendWr(11, IbvSendWR.IBV_WR_SEND, s.sendMr(), 16)));

        int[] events = {0};
        List<IbvWC> got = client.awaitWithEvents(2, deadline, events);
        IbvWC imm = find(got, IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode());
        check(imm.getImm_data() == IMM && imm.getByte_len() == BULK,
                "WRITE WITH IMM completion carries imm 0x" + Integer.toHexString(IMM) + ": " + describe(imm));
        checkSame(s.bulk(), c.bulk(), BULK, "RDMA WRITE payload");
        IbvWC reply = find(got, IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode());
        check(reply.getByte_len() == 16, "reply RECV of 16 bytes: " + describe(reply));
        pass("RDMA WRITE WITH IMM of " + BULK + " bytes byte for byte; req_notify/get_cq_event/ack took "
                + events[0] + " CQ event(s)");
        check(events[0] >= 1, "at least one completion event was delivered");
        List<IbvWC> serverDone = server.pollFor(2, deadline);
        check(serverDone.get(0).getWr_id() == 10 && serverDone.get(1).getWr_id() == 11,
                "server completions in order 10, 11: " + describe(serverDone.get(0)) + ", " + describe(serverDone.get(1)));

        // 3. client READs the server's readable buffer in READ_CHUNKS work requests posted as one
        //    chain: more than the 16 the native side copies on its stack
        long remote = c.recv().getLong(0);
        int remoteKey2 = c.recv().getInt(8);
        int chunk = BULK / READ_CHUNKS;
        List<IbvSendWR> reads = new ArrayList<>();
        for (int i = 0; i < READ_CHUNKS; i++) {
            IbvSendWR read = VerbsPeer.sendWr(1000 + i, IbvSendWR.IBV_WR_RDMA_READ, c.extraMr(), i * chunk, chunk);
            read.getRdma().setRemote_addr(remote + (long) i * chunk);
            read.getRdma().setRkey(remoteKey2);
            reads.add(read);
        }
        client.postSend(reads);
        List<IbvWC> readDone = client.pollFor(READ_CHUNKS, deadline);
        for (int i = 0; i < READ_CHUNKS; i++) {
            IbvWC wc = readDone.get(i);
            check(wc.getOpcode() == IbvWC.IbvWcOpcode.IBV_WC_RDMA_READ.getOpcode() && wc.getWr_id() == 1000 + i,
                    "RDMA READ completion #" + i + ": " + describe(wc));
        }
        checkSame(s.extra(), c.extra(), BULK, "RDMA READ payload");
        pass("RDMA READ of " + BULK + " bytes in a chain of " + READ_CHUNKS + " work requests, byte for byte");
    }

    private void checkContext(VerbsPeer peer) throws IOException {
        check(peer.context.getCmd_fd() >= 0, "context command fd >= 0");
        check(peer.context.getNumCompVectors() >= 1, "context has >= 1 completion vector");
        check(peer.pd.getHandle() >= 0, "PD handle >= 0");
        check(((RdmaVerbsNat) RdmaVerbs.open()).modifyQP(peer.qp, null) == peer.qp, "modifyQP(attr 0) succeeds");
        int odp = peer.context.queryOdpSupport();
        pass("context fd " + peer.context.getCmd_fd() + ", " + peer.context.getNumCompVectors()
                + " comp vector(s), pd handle " + peer.pd.getHandle() + ", ODP caps " + odp);
    }

    private void checkAddresses(RdmaCmId clientId, RdmaCmId connId) throws IOException {
        InetSocketAddress dst = (InetSocketAddress) clientId.getDestination();
        InetSocketAddress src = (InetSocketAddress) connId.getSource();
        InetSocketAddress peer = (InetSocketAddress) connId.getDestination();
        check(dst.getAddress().equals(address.getAddress()) && dst.getPort() == address.getPort(),
                "client's peer address is " + address + " (was " + dst + ")");
        check(src.getPort() == address.getPort(), "server connection's local port is " + address.getPort()
                + " (was " + src + ")");
        pass("getDstAddr/getSrcAddr: client -> " + dst + ", server conn " + src + " <- " + peer);
    }

    private void checkAffinity() {
        long mask = NativeAffinity.getAffinity();
        check(mask != 0, "affinity mask is not empty");
        NativeAffinity.setAffinity(mask);
        check(NativeAffinity.getAffinity() == mask, "affinity unchanged after setting it to itself");
        pass("NativeAffinity mask 0x" + Long.toHexString(mask));
    }

    private RdmaCmEvent await(RdmaEventChannel channel, RdmaCmEvent.EventType expected) throws IOException {
        RdmaCmEvent event = channel.getCmEvent(STEP_TIMEOUT_MS);
        if (event == null) {
            throw new IOException("no CM event within " + STEP_TIMEOUT_MS + " ms, expected " + expected);
        }
        event.ackEvent();
        RdmaCmEvent.EventType type = RdmaCmEvent.EventType.values()[event.getEvent()];
        if (type != expected) {
            throw new IOException("CM event " + type + ", expected " + expected);
        }
        return event;
    }

    private static IbvWC find(List<IbvWC> wcs, int opcode) {
        return wcs.stream().filter(wc -> wc.getOpcode() == opcode).findFirst()
                .orElseThrow(() -> new AssertionError("no completion with opcode " + opcode + " among " + wcs.size()));
    }

    private static void fill(ByteBuffer buffer, int mul, int add) {
        for (int i = 0; i < buffer.capacity(); i++) {
            buffer.put(i, (byte) (i * mul + add));
        }
    }

    private static void checkSame(ByteBuffer expected, ByteBuffer actual, int length, String what) {
        for (int i = 0; i < length; i++) {
            if (expected.get(i) != actual.get(i)) {
                throw new AssertionError(what + " differs at byte " + i + ": expected " + expected.get(i)
                        + " but was " + actual.get(i));
            }
        }
    }

    private static String describe(IbvWC wc) {
        return "wr_id=" + wc.getWr_id() + " opcode=" + wc.getOpcode() + " len=" + wc.getByte_len()
                + " imm=0x" + Integer.toHexString(wc.getImm_data());
    }

    private static long deadline() {
        return System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STEP_TIMEOUT_MS);
    }

    private void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError("check failed: " + what);
        }
    }

    private void pass(String what) {
        passed.add(what);
        log.println("ok: " + what);
    }
}
