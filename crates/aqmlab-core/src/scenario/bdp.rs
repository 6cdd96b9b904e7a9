//! Queue limits in bandwidth–delay products: `limit = "1BDP"`, `"0.5BDP"`, `"2.5BDP"`.
//!
//! RFC 7928 §3.2 asks that an AQM be characterised with buffers sized from the
//! bandwidth–delay product of the path, so a characterisation suite writes buffers in
//! BDPs and lets the simulator turn them into packets. A limit of `k`BDP on a link of
//! rate `C` (bit/s, the link's rate at the start of the run) resolves to
//!
//! ```text
//!     ceil(k · C · RTT / 8 / MTU)   packets (at least 1)
//! ```
//!
//! where MTU is the link's MTU (1500 B unless set) and RTT is the **base** round-trip
//! time of the flows that cross the link: the sum of the propagation delays of the
//! links on the flow's forward route and on its way back, with no queueing and no
//! serialisation. When the flows crossing a link have different base RTTs, the RTT is
//! their **mean** over the flows (each host pair of a traffic entry counts once), the
//! average RTT of the flows through the link as in the rule of thumb that the BDP
//! rule states (Appenzeller, Keslassy and McKeown, "Sizing Router Buffers", SIGCOMM
//! 2004, §1: B = RTT × C with RTT "the average round-trip time of a flow passing across
//! the link"). A flow crosses a link when its data does, or its acknowledgements or
//! replies do (a TCP flow's reverse route counts). A link that no flow crosses has no
//! BDP: a BDP limit there is an error naming the link.

use crate::sim::time::Nanos;

/// What a discipline's builder knows about the base RTT of its link's flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BaseRtt {
    /// No traffic is known where the discipline is built (unit tests, a discipline
    /// built alone): a BDP limit is an error.
    Unknown,
    /// A first pass that only needs the routes: a BDP limit stands in as one packet and
    /// the topology is built again once the RTTs are known.
    Pending,
    /// Traffic is known and no flow crosses the link.
    NoFlows,
    /// The mean base RTT of the flows crossing the link.
    Known(Nanos),
}

/// `"1BDP"` → Some(Ok(1.0)); `"xBDP"` → Some(Err); text without the `BDP` suffix → None.
pub fn parse_multiple(text: &str) -> Option<Result<f64, String>> {
    let num = text.trim().strip_suffix("BDP")?.trim();
    let expected =
        "expected a positive multiple of the bandwidth-delay product, like \"1BDP\" or \"0.5BDP\"";
    Some(match num.parse::<f64>() {
        Ok(k) if k.is_finite() && k > 0.0 => Ok(k),
        _ => Err(expected.to_string()),
    })
}

/// The packet count of `k` BDPs on a link of `rate_bps` and `mtu` with base RTT `rtt`.
pub fn packets(k: f64, rate_bps: u64, mtu: u32, rtt: BaseRtt) -> Result<u64, String> {
    let rtt = match rtt {
        BaseRtt::Known(r) => r,
        BaseRtt::Pending => return Ok(1),
        BaseRtt::NoFlows => {
            return Err("no traffic crosses this link, so its bandwidth-delay product is undefined; give the limit in packets or bytes".into())
        }
        BaseRtt::Unknown => {
            return Err("a limit in BDP needs the scenario's traffic to know the flows' round-trip time, which is not known here; give the limit in packets or bytes".into())
        }
    };
    if rate_bps == 0 || rtt == 0 {
        return Err(format!(
            "the bandwidth-delay product is zero (rate {rate_bps} bit/s, base RTT {rtt} ns); give the limit in packets or bytes"
        ));
    }
    let bytes = k * rate_bps as f64 * rtt as f64 / 8e9;
    let n = (bytes / mtu as f64).ceil();
    if n > 1e12 {
        return Err(format!("{n} packets: too large"));
    }
    Ok((n as u64).max(1))
}

/// The mean base RTT of the flows crossing each link. `paths` gives, per flow (host
/// pair of an entry), the links of its route one way and back (the way back counted
/// for crossing only when `back_carries` — TCP ACKs, replies — and always for the RTT),
/// `delay` each link's propagation delay.
pub fn link_base_rtts(
    n_links: usize,
    delay: &[Nanos],
    paths: &[(Vec<u32>, Vec<u32>, bool)],
) -> Vec<BaseRtt> {
    let mut sum = vec![0u128; n_links];
    let mut count = vec![0u64; n_links];
    let mut seen = vec![false; n_links];
    for (fwd, back, back_carries) in paths {
        let rtt: Nanos = fwd.iter().chain(back).map(|&l| delay[l as usize]).sum();
        seen.iter_mut().for_each(|s| *s = false);
        let crossing = fwd.iter().chain(back.iter().filter(|_| *back_carries));
        for &l in crossing {
            if !std::mem::replace(&mut seen[l as usize], true) {
                sum[l as usize] += rtt as u128;
                count[l as usize] += 1;
            }
        }
    }
    (0..n_links)
        .map(|l| match count[l] {
            0 => BaseRtt::NoFlows,
            c => BaseRtt::Known((sum[l] / c as u128) as Nanos),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiples_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_multiple("1BDP"), Some(Ok(1.0)));
        assert_eq!(parse_multiple("0.5BDP"), Some(Ok(0.5)));
        assert_eq!(parse_multiple(" 2 BDP"), Some(Ok(2.0)));
        assert_eq!(parse_multiple("100pkt"), None);
        assert!(parse_multiple("0BDP").unwrap().is_err());
        assert!(parse_multiple("-1BDP").unwrap().is_err());
        assert!(parse_multiple("BDP").unwrap().is_err());
    }

    #[test]
    fn packets_by_hand() {
        // 10 Mbit/s × 100 ms = 125 000 B = 83.3 packets of 1500 B → 84.
        let rtt = BaseRtt::Known(100_000_000);
        assert_eq!(packets(1.0, 10_000_000, 1500, rtt), Ok(84));
        // Half of it: 62 500 B = 41.67 → 42.
        assert_eq!(packets(0.5, 10_000_000, 1500, rtt), Ok(42));
        // RFC 7928-style 1 Mbit/s, 100 ms: 12 500 B = 8.33 → 9.
        assert_eq!(packets(1.0, 1_000_000, 1500, rtt), Ok(9));
        // A tiny product is still one packet.
        assert_eq!(
            packets(0.01, 1_000_000, 1500, BaseRtt::Known(1_000_000)),
            Ok(1)
        );
        assert!(packets(1.0, 1_000_000, 1500, BaseRtt::NoFlows)
            .unwrap_err()
            .contains("no traffic crosses"));
        assert!(packets(1.0, 1_000_000, 1500, BaseRtt::Unknown).is_err());
        assert_eq!(packets(3.0, 1_000_000, 1500, BaseRtt::Pending), Ok(1));
    }

    #[test]
    fn mean_rtt_of_the_flows_crossing_each_link() {
        // Links 0: a->r (5 ms), 1: r->b (20 ms), 2: b->r (20 ms), 3: r->a (5 ms),
        // 4: c->r (45 ms), 5: r->c (45 ms). Flow a->b: 0,1 back 2,3: RTT 50 ms.
        // Flow c->b: 4,1 back 2,5: RTT 130 ms. Link 1 carries both: mean 90 ms.
        let delay = [5, 20, 20, 5, 45, 45].map(|ms: u64| ms * 1_000_000);
        let paths = vec![
            (vec![0, 1], vec![2, 3], true),
            (vec![4, 1], vec![2, 5], false),
        ];
        let r = link_base_rtts(6, &delay, &paths);
        assert_eq!(r[1], BaseRtt::Known(90_000_000));
        assert_eq!(r[0], BaseRtt::Known(50_000_000));
        // The way back of a one-way flow does not count as crossing.
        assert_eq!(r[5], BaseRtt::NoFlows);
        assert_eq!(r[2], BaseRtt::Known(50_000_000));
        assert_eq!(r[4], BaseRtt::Known(130_000_000));
    }
}
