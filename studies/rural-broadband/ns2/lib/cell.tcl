# One cell of the rural-broadband reconstruction in ns-2.35: the paper's dumbbell
# (Section III, Fig. 2) with DropTail or ARED (ns-2.35 as released, Debian's ns2) or
# CoDel or PIE (the authors' ns-2 code: an ns-2.35 built by ../build-ns2-aqm.sh) at the
# bottleneck 4->5, four FTP flows on Agent/TCP/Newreno, two PackMime-HTTP
# loads and CBR stand-ins for the video and the voice calls.
#
#   ns cell.tcl QUEUE TARGET_S LIMIT_PKTS SEED DURATION_S WARMUP_S D8_S [WEB]
#
# QUEUE is DropTail, ARED, CoDel or PIE (TARGET_S: ARED's targetdelay_, CoDel's target_,
# PIE's qdelay_ref_; ignored for DropTail). Prints one line
#   CELL delay_ms <mean queueing delay> drop_pct <drops/arrivals> util <departed bits/(C*T)>
# over [WARMUP, DURATION] at the bottleneck queue. Values are the paper's (section in
# brackets) or ns-2.35's defaults (tcl/lib/ns-default.tcl, line); others are marked
# (assumed) and follow the aqmlab study (../scenario.toml) so that the two can be compared.
# WEB is 1 (default) or 0: 0 leaves out the two PackMime loads (a diagnostic, see
# ../results-ns2-aqm.md).
if {$argc != 7 && $argc != 8} {
    puts stderr "usage: ns cell.tcl QUEUE TARGET_S LIMIT_PKTS SEED DURATION_S WARMUP_S D8_S \[WEB\]"
    exit 2
}
lassign $argv qkind target limit seed duration warmup d8 web
if {$web eq ""} { set web 1 }
if {$web ni {0 1}} {
    puts stderr "cell.tcl: WEB = '$web', expected 0 or 1"
    exit 2
}
if {$qkind ni {DropTail ARED CoDel PIE}} {
    puts stderr "cell.tcl: QUEUE = '$qkind', expected DropTail, ARED, CoDel or PIE"
    exit 2
}
global defaultRNG
$defaultRNG seed $seed
set ns [new Simulator]
if {$qkind in {CoDel PIE} && [catch {delete [new Queue/$qkind]}]} {
    puts stderr "cell.tcl: this ns has no Queue/$qkind: build one with ../build-ns2-aqm.sh"
    exit 3
}
$ns use-scheduler Heap

# ARED [III]: Queue/RED with adaptive_ 1 (Floyd et al. 2001), gentle (ns-default.tcl:146),
# max_p in [bottom_ 0, top_ 0.5] (:165-166), alpha 0.01, beta 0.9 (:160-161), interval
# 0.5 s (:163), min_th from targetdelay_ and the link rate with max_th = 3 min_th
# (thresh_ = maxthresh_ = 0: queue/red.cc:201-210), mean_pktsize_ 500 B (:134),
# q_weight_ automatic (-1, :137). "Packet mode" [III]: bytes_ and queue_in_bytes_ false
# (their defaults are true, :122-123).
Queue/RED set adaptive_ 1
Queue/RED set targetdelay_ $target
Queue/RED set bytes_ false
Queue/RED set queue_in_bytes_ false
# CoDel: Nichols's codel.cc, interval_ 100 ms as its patch sets it; target_ swept [III.A].
# PIE: the authors' pie.cc with the defaults of ../build-ns2-aqm.sh (a_ 0.125, b_ 1.25,
# tUpdate_ 30 ms, dq_threshold_ 10000 B, burst_allowance_ 100 ms,
# mean_pktsize_ 1000: the buffer is limit_ x 1000 B) in packet mode [III] (bytes_ false,
# as the study's E2); qdelay_ref_ swept [III.A].
if {$qkind eq "CoDel"} { Queue/CoDel set target_ $target }
if {$qkind eq "PIE"} { Queue/PIE set qdelay_ref_ $target; Queue/PIE set bytes_ false }

# TCP [III]: NewReno, IW 3, MSS 1024 B (packetSize_ is the segment's payload; 40 B of
# TCP/IP headers are added: 1064 B on the wire). Everything else ns-2.35's defaults:
# window_ 20 (ns-default.tcl:934), maxburst_ 0 (:920), TCPSink acks every segment.
Agent/TCP set windowInit_ 3
Agent/TCP set packetSize_ 1024

# Topology [III, Fig. 2]: hosts 1, 2, 3 -> router 4 -> bottleneck (2 Mbit/s, D = 0) ->
# router 5 -> hosts 6, 7, 8; left links 2.5 ms; access links 100 Mbit/s (assumed, as
# the study); d6 = 2.5, d7 = 47.5 ms, d8 as given [III.A].
for {set i 1} {$i <= 8} {incr i} { set n($i) [$ns node] }
$ns duplex-link $n(1) $n(4) 100Mb 2.5ms DropTail
$ns duplex-link $n(2) $n(4) 100Mb 2.5ms DropTail
$ns duplex-link $n(3) $n(4) 100Mb 2.5ms DropTail
set q [dict get {DropTail DropTail ARED RED CoDel CoDel PIE PIE} $qkind]
$ns simplex-link $n(4) $n(5) 2Mb 0ms $q
$ns simplex-link $n(5) $n(4) 2Mb 0ms DropTail
$ns queue-limit $n(4) $n(5) $limit
$ns queue-limit $n(5) $n(4) $limit
$ns duplex-link $n(5) $n(6) 100Mb 2.5ms DropTail
$ns duplex-link $n(5) $n(7) 100Mb 47.5ms DropTail
$ns duplex-link $n(5) $n(8) 100Mb [expr {$d8 * 1000.0}]ms DropTail

set startrng [new RNG]
$startrng seed [expr {$seed * 7 + 1}]
proc start_at {} {
    # every source starts at U[0, 2 s] (assumed, as the study)
    global startrng
    return [$startrng uniform 0 2]
}

# Four long-lived FTP flows [III]: two 1 -> 6, two 3 -> 8.
foreach {src dst} {1 6 1 6 3 8 3 8} {
    set tcp [new Agent/TCP/Newreno]
    set sink [new Agent/TCPSink]
    $ns attach-agent $n($src) $tcp
    $ns attach-agent $n($dst) $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at [start_at] "$ftp start"
}

# Two PackMime-HTTP loads [III], servers left (1, 3), clients right (6, 8), HTTP/1.0 at
# 1.4 new connections/s each (assumed, the study's rate: see the README).
foreach {srv cli} [expr {$web ? {1 6 3 8} : {}}] {
    set pm [new PackMimeHTTP]
    $pm set-client $n($cli)
    $pm set-server $n($srv)
    $pm set-rate 1.4
    foreach v {flow req rsp} { set rng($v) [new RNG]; $rng($v) seed [expr {$seed * 13 + [string length $v] + $srv}] }
    set fa [new RandomVariable/PackMimeHTTPFlowArrive 1.4]
    set rq [new RandomVariable/PackMimeHTTPFileSize 1.4 0]
    set rs [new RandomVariable/PackMimeHTTPFileSize 1.4 1]
    $fa use-rng $rng(flow); $rq use-rng $rng(req); $rs use-rng $rng(rsp)
    $pm set-flow_arrive $fa
    $pm set-req_size $rq
    $pm set-rsp_size $rs
    $ns at [start_at] "$pm start"
}

proc cbr {from to bytes interval} {
    global ns n
    set udp [new Agent/UDP]
    set null [new Agent/Null]
    $ns attach-agent $n($from) $udp
    $ns attach-agent $n($to) $null
    $ns connect $udp $null
    set c [new Application/Traffic/CBR]
    $c set packetSize_ $bytes
    $c set interval_ $interval
    $c set random_ 0
    $c attach-agent $udp
    $ns at [start_at] "$c start"
}
# Video 2 -> 7 [III, Table I]: a CBR stand-in for the 450 kbit/s VBR Evalvid stream,
# 1000-B packets (plus 40 B IP/UDP/RTP headers: 1040 B) at 450 kbit/s of payload.
cbr 2 7 1040 [expr {1000.0 * 8 / 450000.0}]
# Voice [III]: three bidirectional G.729A calls 2 <-> 7, one 20 ms packet of 2 frames
# (20 B) plus 40 B of IP/UDP/RTP headers each way (CBR stand-in for ns2voip++, which
# adds talk spurts and silences).
for {set i 0} {$i < 3} {incr i} {
    cbr 2 7 60 0.020
    cbr 7 2 60 0.020
}

# Bottleneck queue monitor: arrivals, drops, departures and the per-packet queueing delay
# of departing packets (tools/queue-monitor.cc set-delay-samples).
set qmon [$ns monitor-queue $n(4) $n(5) ""]
set samples [new Samples]
$qmon set-delay-samples $samples
proc reset_stats {} {
    global qmon samples
    $qmon reset
    $samples reset
}
proc finish {} {
    global qmon samples duration warmup
    set arr [$qmon set parrivals_]
    set drops [$qmon set pdrops_]
    set bdep [$qmon set bdepartures_]
    set delay [expr {[$samples mean] * 1000.0}]
    set drop [expr {$arr > 0 ? 100.0 * $drops / $arr : 0.0}]
    set util [expr {$bdep * 8.0 / (2.0e6 * ($duration - $warmup))}]
    puts [format "CELL delay_ms %.4f drop_pct %.4f util %.5f" $delay $drop $util]
    exit 0
}
$ns at $warmup "reset_stats"
$ns at $duration "finish"
$ns run
