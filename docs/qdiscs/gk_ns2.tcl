# GK in ns-2.35 on aqmlab's examples/aqm-compare.toml set-up, for the cross-check in
# docs/qdiscs/gk.md and tests/aqm_research.rs (gibbens_gk_standing_queue_follows_the_buffer_as_in_ns2).
# Run with Debian's ns2 package: ns gk_ns2.tcl LIMIT ECN   (e.g. ns gk_ns2.tcl 1000 1).
# 'T time qlen' every 0.5 s; MEANQ is the mean queue (packets) sampled every 10 ms from 10 s to 60 s.
set limit [lindex $argv 0]
set ecn [lindex $argv 1]
set ns [new Simulator]
Queue/GK set mean_pktsize_ 1500
set r1 [$ns node]; set r2 [$ns node]
$ns duplex-link $r1 $r2 10Mb 30ms GK
$ns queue-limit $r1 $r2 $limit
for {set i 0} {$i < 5} {incr i} {
  set s($i) [$ns node]; set d($i) [$ns node]
  $ns duplex-link $s($i) $r1 1000Mb 10ms DropTail
  $ns duplex-link $r2 $d($i) 1000Mb 10ms DropTail
  $ns queue-limit $s($i) $r1 10000
  $ns queue-limit $r2 $d($i) 10000
  set tcp($i) [new Agent/TCP/Newreno]
  $tcp($i) set packetSize_ 1460
  $tcp($i) set window_ 10000
  $tcp($i) set ecn_ $ecn
  set sink($i) [new Agent/TCPSink]
  $ns attach-agent $s($i) $tcp($i); $ns attach-agent $d($i) $sink($i)
  $ns connect $tcp($i) $sink($i)
  set ftp($i) [new Application/FTP]; $ftp($i) attach-agent $tcp($i)
  $ns at 0.0 "$ftp($i) start"
}
set qmon [$ns monitor-queue $r1 $r2 [open /dev/null w] 0.1]
set sum 0; set n 0; set maxq 0
proc sample {} {
  global ns qmon sum n maxq
  set q [$qmon set pkts_]
  if {[$ns now] >= 10} { set sum [expr $sum + $q]; incr n; if {$q > $maxq} {set maxq $q} }
  $ns at [expr [$ns now] + 0.01] "sample"
}
proc trace {} {
  global ns qmon
  puts "T [$ns now] [$qmon set pkts_]"
  $ns at [expr [$ns now] + 0.5] "trace"
}
$ns at 0 "sample"
$ns at 0 "trace"
$ns at 60.0 "finish"
proc finish {} {
  global sum n maxq qmon
  set dep [$qmon set bdepartures_]
  puts "MEANQ [expr double($sum)/$n] pkts MAXQ $maxq drops [$qmon set pdrops_] departures_bytes $dep"
  exit 0
}
$ns run
