# Paper 004's web page model (Sec 3.2.3) on ns-2.35 FullTcp/Sack, no load.
# The paper's web page (100 KB HTML from server 1, then 6 connections to each of 4
# servers, 25 objects of 25 KB per server, 5 s think) on real ns-2.35, no other load,
# reading "subsequent GET" as a NEW Agent/TCP/FullTcp/Sack connection per object.
# The DOCSIS link is reduced to 1 ms each way (upstream 30 Mbit/s, downstream 50 Mbit/s
# = the peak rate; the 20 MB downstream burst covers a 2.6 MB page). Server one-way
# delays 9, 14, 24, 49 ms (RTT 20, 30, 50, 100 ms). Prints each page load time.
# Usage: ns web.tcl WINDOW SEGSIZE   (ns-2 defaults: 20 536)
set win [lindex $argv 0]
set seg [lindex $argv 1]
set ns [new Simulator]
Agent/TCP/FullTcp set window_ $win
Agent/TCP/FullTcp set segsize_ $seg
set c [$ns node]; set cmts [$ns node]
$ns simplex-link $c $cmts 30Mb 1ms DropTail
$ns simplex-link $cmts $c 50Mb 1ms DropTail
$ns queue-limit $cmts $c 10000
set owd {9ms 14ms 24ms 49ms}
set owds {0.011 0.016 0.026 0.051}
for {set i 0} {$i < 4} {incr i} {
  set s($i) [$ns node]
  $ns duplex-link $s($i) $cmts 1Gb [lindex $owd $i] DropTail
}
set pages {}
set left 0
set nobj 0
Agent/TCP/FullTcp instproc done_data {} {
  global ns
  $self instvar srv ftp
  finish_obj $srv [expr [$ns now]] $ftp
}
proc get {i bytes} {
  # client GET at now: server starts (opens, sends) after the one-way request delay
  global ns s c owds
  set src [new Agent/TCP/FullTcp/Sack]
  set dst [new Agent/TCP/FullTcp/Sack]
  $src set signal_on_empty_ true
  $src set srv $i
  $ns attach-agent $s($i) $src; $ns attach-agent $c $dst
  $ns connect $src $dst; $dst listen
  set ftp [new Application/FTP]; $ftp attach-agent $src; $src set ftp $ftp
  $ns at [expr [$ns now] + [lindex $owds $i]] "$ftp send $bytes"
}
proc finish_obj {i t ftp} {
  global ns left queue owds start nobj
  incr left -1
  incr nobj
  if {$nobj == 1} {
     for {set k 0} {$k < 4} {incr k} { for {set j 0} {$j < 6} {incr j} { incr queue($k) -1; get $k 25000 } }
     return
  }
  if {$queue($i) > 0} { incr queue($i) -1; get $i 25000 }
  if {$left == 0} {
     # client got the last byte ~ one-way delay before the sender saw the ACK
     puts [format "PLT %.3f" [expr $t - [lindex $owds $i] - $start]]
     $ns at [expr [$ns now] + 5] "page"
  }
}
proc page {} {
  global ns queue left start nobj
  set start [$ns now]; set nobj 0
  set left 101
  for {set k 0} {$k < 4} {incr k} { set queue($k) 25 }
  get 0 100000
}
$ns at 0.0 "page"
$ns at 40 "exit 0"
$ns run
