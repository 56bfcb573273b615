/// The pictures the jobs line ships: handed to the host when it registers
/// (`LineRegistrar.registerPicture`), shown by its cards by name. A small PNG, 96×96: the jobs line's badge.
enum JobsPictures {
    /// `logo`, as base64 (`base64 -w0 logo.png`), one line of text broken for reading.
    static let logo = """
        iVBORw0KGgoAAAANSUhEUgAAAGAAAABgCAYAAADimHc4AAAJzUlEQVR4Aexca2wcVxU+Z8Zu7KStWuRC00JIECpVKElUJ/auExVX
        IrbXbUkc29uKBgmhAkVqC6VREgUI4lESg0CUCpQifqAgHp6NnbQJWdsVNETB3sRJUwiu+gDJJVBC3NCQ0vg5c3vO2m6ddHfmzmNn
        9jGjvZk7995zzne+b+bOzN11FAi3QBkIBQiUfoBQgFCAgBkIOHx4BYQCBMxAwOHDKyAUwBkDtbGu99c071nJhevOvARvlbdXwLKG
        3gXRJq0lEkt00H53JKb1RWPaKdqPRGMJoYBxWhVikAvXuW26Lz2mb9ombdvCvoKnOjOCvBKgrrnrg5FY4kEir2eBeuEcIHYjwGba
        fxoB1wLgLbSvgizbdF96zNppm7RtN/tin9GY9gDHyGIeSHPgAqxaq60g0jsiMW1ICGMYAX5M5DUSG/OoePWZN+0TH+cYEYoViSV2
        cmyvAjj1E5gAtTFtKZ2RCVXFZ4n0zQi41GkSdu04FgJs4diRpkRnTXP3TXZ9eDXedwGqP6EtoulgNxFwCgDbEAEhoI1jU4mrhj4U
        bUrsWr32yRv8huKbANX1+6vobHusvBxeBkSe032LbUkqQhkgfEEvG/9btEnbseaOA9da2ng0wBcS6hq6biuvHD1FZ9tDCHiFR9g9
        d0PYKgFxq66PDtU2dt3ueYAMDnMuQKQxsVmo+h8oueszxM/PJoSFiqI/HY0lNuUaYM4EqK9/piIa0xKoQAcAqlBwWxrz9yMx7bec
        S67g50SAaKP24bHKkWNAN1ko8I2u3LvHKkZSuXpS8lwAIr8JFH60xI8VOPdvw0fE5YqYGqxp1O54u9GjincCtGsqPeV8WyAeJGxX
        USmqD10JVyuI++n95ZsAAr1KzjMBav8PLYjwNSqegfMqSa/8cG4K4PZIY1e7Vz4VLxzVNHYvJ9Z3m/sqol7F+IVXyxiuBeAXLAWn
        9iNgZRFRbJoK56qq8BTnbjpQotOVAPx4Ri9Y+xDxAxKximoI51xeMbqXOChzk5grAcYrXqM1HVztBkAh25IIa8YrRn7iJgfHAtQ2
        aVsBwbObkZskArVF/HyaC4cgHAkQadq7WEH4jsOYRWfGXNQ0aEucJOZIAMDJnQDpV3UIN2YAVUXBb3DNbrEtQF1DN38teLfdQMU+
        HlFsrG3as8xunrYFEIoeTj0ZWaarAMS3MnaZNNoSIBLrWk033nUm/kq7C2Gd3avAlgAA+qNBM/zw/Sug/2BbxvLotmjQ8EAB43tz
        QVjVpQWghbZ6egP8uJXDku9HbGSuZHmQFoBuMutlnZb8OIQmWQ6kBQAh71Q2eLGOQyGkT1YpAaINe24GxI8UK2Ge50VcpTmTcCwl
        gKEY0opKxCyJIbKcSQmAiKEANk8bWc4sBVjVrF1P83+NzfjhcAE11Y1dC62IsBRA1ZX1iIBWjsL+SxlgzspR5x8ZX9px2ZFy2fG7
        Dunxc8W7GsMGKQZIBEvuLAWgSIXzizYCm1cfgYut8FgKIBAKTwCrrH3ql+HOUgCEUACneslwZy5Au6bSE9CNTgGEdtYnr6kAq96E
        6+j5x9W3/iUuwrwV9XuvMePAVACYtFbQzHnYB1B5hW56DzUVoEwJBXB7EglFOBfAbfDQ3poB0ytgyoAz1i7CEWYMoIGmHJoKMDlZ
        PmzmPOyzZmB0QnUuwHOHWs5TiHEq4ccZA+MzHGa1Nr0CZqxMFZwZE+4yM2DJnaUAAmTvA5kRlHKrDHeWAqAIBXB6EslwZykABbe8
        jGiMbx9a4s0aS9C6SdbOIDpQWD7EWAogBD4XBPZsMd9zbUW2Lrh4cSprXxAdwlBesIprKcAk4JMij06the9bkDWnC29MZO3zu4M5
        01Vjn1VcSwFO9Lb+mxbkjlk58qN/yaKr4aYPZV/beuWfb/gBQy4GwrHBg3HL6dtSAI4mhLBUksflslx1ZTlsfvBWUFXMGmbw5H+y
        9vndIcuZlACKofguwIL5ZXBb9Aa4s2Ex3LdxKfzypw2w/KNZ/7cy+Mvz5+DM2Yt+85w1nixnSlYPczoG+tpeACFenNOU8+qNC6+E
        nV+vg21fXgmf/dRSeG+V+V/Bdu57KeeYpAMQV2nOJAykBEj7QehJ7/Pwn8MDr8IzR/6VN8gEovSMIS+AkZ8CDJ48C9s7UoGRnymw
        AMV7AQZ64z00DfVmChhEG8/33/3RcfjSVw/DxIQRBITMMYXoPZpslT4jlMxeMreiUbYpc48/redeH4PU8TPw2M/+DPd8rgcO9A37
        E9hGlCmhPGJjONgSoL9vw1/pnazTTgCnY1/6+3moa95zSbnr3gPwle1HoHPfyzAxmUdn/UySzM1gb9vQzKHUzpYAaY+ifCuA0NP1
        8J93GBBiTEF1yzsNcjXbAqR6WoZB4M/l3JfQKIQn+g+2vmI3Y9sCcAA01O10Qx7jelhoPgBxgchw9BekjgSge8FZIZSHQ/JnGDCU
        LSeT8ZGZI1s7RwJwhFRv2y4Q8ATXS7oQB2kuHJLgWACON2+s6gG6AA9zvRQLLbgdmebAefauBDh06PYpmvvaSIR/OIdQmJZE/unJ
        scoW5sBNBq4E4MDTc5+yXgD4txTJgQMs9Lw/quvwyROH7nrNLQzXAjCAgWTbSRR4H9dLohjKZwafjnvyVa0nAjDpAz1tv6GroIPr
        xVw4R7rpal7l6JkADCiVbN9Kc+M6All00xHnxLlxjpyrV8VTARhUqif+lD4lVtOL2qt8XAyFiB/mnDg3r/PxXAAGyPPjhFBX0ntC
        Px8XdBHQjwKqOadc5JETARgo/5piYmRJPV26v+LjQiyEfRfnQN+F/DdX+HMmAAM+cWLlJM2ZGymRh+hdoYBWUGm1V8D9hP2LnAPn
        kquSUwFmQVMij9Pq/TKaS/fyD5Zm2/Ntz9gYI2Md6Gn3ZZnFFwGY6KPJ+PN0E9uAiNWcJCfL7flQGAtjYmyMkbH6hcs3AWYT4pc2
        TpKTpakpOdse1J4xMBbGxNj8xmFDAG+hcbKpZHuzMJRqelraQcXWV3mu0AgYong7ODZjYCyu/LkwDkyAWcyp3tZnab7dRuUWRGUx
        TQWP0FrLH729aQudfdLcvoljcCwq2zj2LI6g9oELMDdx/kqPpoIfppLxelWZfx0Y4l4irpNE+d/ccTJ1tmFb9sG+2OfRZPsPOIaM
        vV9j8kqAuUkf+d2dr9Pz969Tyfg9JMo1cF7M1yfUqim9fNGkEDcD4K0ClDVcuM5t3MdjeCzbsC37YF+Qp1veCnA5XwMD8dFjv99w
        brBv/enjPfEXed5OJVv/xIXr3MZ9PIbHXm6fr8cFI0C+EugWVyiAWwZd2ocCuCTQrXkogFsGXdqHArgk0K15KIAFg7nufgsAAP//
        mIxuZQAAAAZJREFUAwB0NDfupuh+ogAAAABJRU5ErkJggg==
        """.split(separator: "\n").joined()
}
